"""Swan (arXiv 2206.04687): choosing CPU cores for on-device training without hurting the user
(docs/seeds.md section 3).

Execution choices are CPU core sets: for every CPU type, the first 1..n cores of that type in id
order ("4567", "456", "45", "4", "0123", "012", "01", "0" on a 4 big + 4 little SoC).  Each
choice is profiled on the idle phone (``ctx.estimate``: one batch's latency and whole-phone
energy, hence power).  Choices are ordered by cost: any big core costs more than any little
core, the prime core more than other big cores, more cores of a type more than fewer.  Sorted by
latency, a choice is pruned when a cheaper one is as fast or faster (no real trade-off).

Control loop, after every batch: stop if the phone is not charging or the battery is below the
threshold; decline training (stop) if the battery is hotter than 35 C; if the batch took more
than 1.1x its choice's profiled latency (a foreground app interferes), downgrade to the next
cheaper choice; after 2 minutes of simulated time without interference, try the next costlier
choice again.  The profiled latency a batch is held to is, by default, the profile at the clocks
cpufreq allowed during that batch (option ``interference_reference``): a thermal cap lowers a
cluster's ``scaling_max_freq``, which Swan can read, and a batch slowed only by that cap is
throttling, not an app (docs/validation.md, Swan under throttling).  Swan runs on PyTorch, so its choices run PyTorch's kernels and per-op dispatch
(the same model as the ``pytorch`` baseline, :mod:`socsim.sched.baselines`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from socsim.contract import dvfs
from socsim.contract.cores import big_cores, clusters_of, little_cores
from socsim.errors import InputError
from socsim.contract import BaseScheduler, BatchRecord, Plan
from socsim.sched.baselines import PYTORCH_DEFAULT_VERSION, PyTorchRun, torch_version_of
from socsim.contract import single_unit_plan


class SwanOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    choices: list[str] | None = Field(
        None, min_length=1, description="core sets as digit strings (e.g. ['4567', '45', '0']); default: per SoC")
    framework: Literal["pytorch", "mnn"] = Field("pytorch", description="kernels the choices run")
    torch_version: Literal["1.8", "1.11"] = Field(
        PYTORCH_DEFAULT_VERSION, description="with framework pytorch, the release (as the pytorch baseline's option)")
    require_charging: bool = True
    # min_battery 0.2: assumption (docs/seeds.md 3: "battery below a threshold", no value given);
    # a workload can set it.  max_battery_temp_c 35 and interference_ratio 1.1: docs/seeds.md 3.
    min_battery: float = Field(0.2, ge=0, le=1, description="stop below this state of charge")
    max_battery_temp_c: float = Field(35.0, ge=-20, le=80, description="decline training above this battery temperature")
    interference_ratio: float = Field(1.1, gt=1, description="batch latency / profiled latency that means interference")
    upgrade_after_s: float = Field(120.0, gt=0, description="try a costlier choice after this long without interference")
    # docs/seeds.md 3 states the test against the idle-phone profile and says nothing of thermal
    # throttling; both readings are expressible.  Default "cpufreq": the test is there to detect
    # a foreground app, a thermal cap is visible to any process in cpufreq's policy limits
    # (scaling_max_freq), and taken literally ("idle_profile") the test reads every throttled
    # batch as an app and walks Swan down to slower sets that the caps slow further
    # (docs/validation.md, Swan under throttling).
    interference_reference: Literal["cpufreq", "idle_profile"] = Field(
        "cpufreq", description="what a batch's latency is compared with: the choice's profile at the clocks "
        "cpufreq allowed during the batch (thermal caps), or the idle-phone profile alone")

    @field_validator("choices")
    @classmethod
    def _choices(cls, v: list[str] | None) -> list[str] | None:
        """Each choice a string of distinct core ids, no core set twice; the message names the
        choice at fault.  Whether the SoC has the cores is checked when Swan plans."""
        if v is None:
            return v
        seen: set[frozenset[str]] = set()
        for s in v:
            if not (s.isascii() and s.isdigit()):
                raise ValueError(f"choice {s!r}: a core set is a string of core ids like '4567'")
            if len(set(s)) != len(s):
                raise ValueError(f"choice {s!r}: a core set names each core once")
            if frozenset(s) in seen:
                raise ValueError(f"choice {s!r}: the same core set is given twice")
            seen.add(frozenset(s))
        return v

    @field_validator("torch_version", mode="before")
    @classmethod
    def _torch_version(cls, v: object) -> object:
        return torch_version_of(v)

    @model_validator(mode="after")
    def _torch_version_needs_pytorch(self) -> "SwanOptions":
        if self.framework != "pytorch" and "torch_version" in self.model_fields_set:
            raise ValueError(f"torch_version applies to framework 'pytorch', not {self.framework!r}")
        return self


@dataclass(frozen=True)
class Choice:
    name: str                 # "4567"
    cores: tuple[int, ...]
    cost: tuple[int, ...]     # sort key: (uses big, prime cores, big cores, little cores)
    latency_s: float = 0.0    # mean over the settled governor cycle
    energy_j: float = 0.0
    latency_max_s: float = 0.0  # slowest batch of that cycle: the interference reference
    #: the governor's frequencies (MHz per used cluster) of each batch of that cycle
    freqs: tuple[tuple[tuple[str, float], ...], ...] = ()

    @property
    def power_w(self) -> float:
        return self.energy_j / self.latency_s if self.latency_s > 0 else 0.0


def op_times_by_kind(soc, graph, cores: tuple[int, ...],
                     torch_version: str = PYTORCH_DEFAULT_VERSION) -> dict[str, float]:
    """One batch of ``graph`` run as PyTorch runs it on ``cores`` (every cluster at its top
    frequency): the CPU cost model's op times summed per op kind, the grouped convolutions'
    gradient sums of PyTorch up to 1.10 as kind ``group_grad_sum`` (host-core overheads are
    ``PyTorchRun(graph, version, soc, cores).overheads``).  The op-level view behind a core-set choice
    (docs/validation.md, Swan; benchmarks/swan_breakdown.py)."""
    from socsim.hw.cost import CpuConfig
    from socsim.hw.cpu import CpuCostModel
    cfg = CpuConfig(cores=tuple(cores), freqs_mhz=tuple(sorted((cl.name, cl.max_mhz) for cl in soc.cpu.clusters)))
    model = CpuCostModel(soc)
    out: dict[str, float] = {}
    for op in PyTorchRun(graph, torch_version, soc, tuple(cores)).ops:
        kind = "group_grad_sum" if op.name.endswith(".group_grad_sum") else op.kind
        out[kind] = out.get(kind, 0.0) + model.cost(op, cfg).time_s
    return out


def core_set_choices(soc) -> list[tuple[int, ...]]:
    """The first 1..n cores of each CPU type, most cores first, big types before little."""
    out: list[tuple[int, ...]] = []
    for pool in (big_cores(soc), little_cores(soc)):
        for k in range(len(pool), 0, -1):
            c = tuple(pool[:k])
            if c not in out:
                out.append(c)
    return out


def cost_key(soc, cores: tuple[int, ...]) -> tuple[int, ...]:
    """Swan's cost order as a sort key: any big > any little, prime > other big, more > fewer."""
    clusters = soc.cpu.clusters
    prime = set(clusters[-1].core_ids) if len(clusters) > 2 else set()
    little = set(little_cores(soc)) if len(clusters) > 1 else set()
    n_prime = sum(1 for c in cores if c in prime)
    n_little = sum(1 for c in cores if c in little)
    n_big = len(cores) - n_little
    return (int(n_big > 0), n_prime, n_big, n_little)


Freqs = tuple[tuple[str, float], ...]


def settled_profile(ctx, plan: Plan, rounds: int = 8) -> tuple[float, float, float, tuple[Freqs, ...]]:
    """Profile ``plan`` as a few batches on the idle phone measure it: the workload's governor
    picks each batch's frequencies from the previous batch's load (the engine's own
    :func:`~socsim.contract.dvfs.cluster_frequencies`), until the frequencies repeat.  Returns
    (mean latency, mean energy, slowest latency, each batch's frequencies of the used clusters)
    over the repeating cycle."""
    soc, wl = ctx.soc, ctx.workload
    used = {c.name for c in clusters_of(soc, plan.cpu_cores)}
    util: dict[str, float] = {}
    prev: dict[str, float] = {}
    seen: list[tuple] = []
    runs: list[tuple[float, float]] = []
    ran_at: list[Freqs] = []
    for _ in range(rounds):
        f = dvfs.cluster_frequencies(soc, plan.governor or wl.cpu.governor, wl.cpu.freq,
                                     plan.cpu_freq_mhz, used, util, prev)
        key = tuple(sorted(f.items()))
        if key in seen:
            i = seen.index(key)
            cycle = runs[i:]
            return (sum(t for t, _ in cycle) / len(cycle), sum(e for _, e in cycle) / len(cycle),
                    max(t for t, _ in cycle), tuple(ran_at[i:]))
        seen.append(key)
        freq_used = {k: v for k, v in f.items() if k in used}
        t, e = ctx.estimate(plan, freq=freq_used)
        runs.append((t, e))
        ran_at.append(tuple(sorted(freq_used.items())))
        full = dict(f)
        if soc.dsp is not None:
            full["dsp"] = ctx.dsp_mhz
        if soc.gpu is not None:
            full["gpu"] = soc.gpu.opps[-1].freq_mhz
        busy, dur = ctx.busy_s(plan, full)
        util = dvfs.schedutil_util(soc, plan.cpu_cores, busy, dur)
        prev = f
    return (sum(t for t, _ in runs) / len(runs), sum(e for _, e in runs) / len(runs), max(t for t, _ in runs),
            tuple(ran_at))


def capped_reference(ctx, plan: Plan, choice: Choice, caps_mhz: dict[str, float],
                     memo: dict[tuple, float]) -> float:
    """The latency ``choice`` is expected to take under the thermal caps ``caps_mhz`` (MHz per
    cluster, cpufreq's ``scaling_max_freq``): its settled profile with each batch's frequencies
    clamped to the caps, the slowest of the cycle.  With no used cluster capped below where its
    profile ran, the profile itself (``latency_max_s``).  ``memo`` holds what was estimated."""
    capped = tuple(tuple((cl, min(f, caps_mhz.get(cl, f))) for cl, f in fs) for fs in choice.freqs)
    if capped == choice.freqs:
        return choice.latency_max_s
    key = (choice.name, capped)
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = max(ctx.estimate(plan, freq=dict(fs))[0] for fs in capped)
    return hit


def prune(choices: list[Choice]) -> tuple[list[Choice], list[Choice]]:
    """Sort by latency; drop every choice costlier than a cheaper one that is as fast or faster.
    Returns (kept, fastest first; pruned)."""
    ordered = sorted(choices, key=lambda c: (c.latency_s, c.cost))
    kept, pruned = [], []
    for c in ordered:
        dominated = any(o.cost < c.cost and o.latency_s <= c.latency_s for o in choices)
        (pruned if dominated else kept).append(c)
    return kept, pruned


class Swan(BaseScheduler):
    name = "swan"
    precision = "fp32"
    description = "Swan: core-set exploration, pruning and interference-driven downgrade/upgrade"
    Options = SwanOptions

    def __init__(self, options: SwanOptions | None = None) -> None:
        super().__init__(options)
        self.kept: list[Choice] = []
        self.pruned: list[Choice] = []
        self.plans: list[Plan] = []
        self.level = 0                       # index into kept (0 = fastest, costliest)
        self.last_quiet_from_s = 0.0         # time since which no interference was seen
        self.events: list[dict[str, Any]] = []
        self.interfered_batches = 0
        self.throttled_batches = 0            # slower than the idle profile, explained by the caps
        self._caps_at_start: dict[str, float] = {}
        self._capped_memo: dict[tuple, float] = {}

    # ------------------------------------------------------------------ planning
    def plan(self, ctx) -> Plan:
        soc = ctx.soc
        sets = self._sets(ctx)
        graph = ctx.graph(self.precision)
        plans = {"".join(map(str, cores)): self._plan_for(soc, graph, cores) for cores in sets}
        profiled: list[Choice] = []
        # the cache simulation of every op on every core set, in worker processes with SOCSIM_JOBS
        # (it does not depend on the frequencies the governor settles at; docs/memory.md)
        ctx.prefetch(list(plans.values()))
        for cores in sets:
            name = "".join(map(str, cores))
            plan = plans[name]
            t, e, t_max, ran_at = settled_profile(ctx, plan)
            profiled.append(Choice(name, cores, cost_key(soc, cores), t, e, t_max, ran_at))
        self.kept, self.pruned = prune(profiled)
        self.plans = [plans[c.name] for c in self.kept]
        self._by_label = {p.label: i for i, p in enumerate(self.plans)}
        self.level = 0
        return self.plans[0]

    def _plan_for(self, soc, graph, cores: tuple[int, ...]) -> Plan:
        """One core set's plan: PyTorch's run of the graph on those cores (its threading and
        host-core dispatch depend on the set), or MNN's graph as it is."""
        label = f"swan {''.join(map(str, cores))}"
        if self.options.framework == "pytorch":
            run = PyTorchRun(graph, self.options.torch_version, soc, cores)
            return single_unit_plan(run, "cpu", cores, label, prep_overheads=run.overheads)
        return single_unit_plan(graph, "cpu", cores, label)

    def _sets(self, ctx) -> list[tuple[int, ...]]:
        if self.options.choices is None:
            return core_set_choices(ctx.soc)
        out = []
        # the options model checked the strings (digits, each core once, no set twice)
        for s in self.options.choices:
            try:
                out.append(ctx.cores(sorted(int(ch) for ch in s), field="scheduler.options.choices"))
            except InputError as e:
                raise InputError(e.message, field=e.field, value=s) from None
        return out

    # ------------------------------------------------------------------ the control loop
    def on_batch_start(self, ctx, batch: int) -> Plan | None:
        """The gates, before every batch (the first included): not charging, battery low or
        battery hot, and the batch is not trained (the run ends there)."""
        o = self.options
        self._caps_at_start = dict(ctx.caps_mhz)
        if o.require_charging and not ctx.charging:
            ctx.stop("swan: phone not charging")
        elif ctx.battery_soc < o.min_battery:
            ctx.stop(f"swan: battery below {o.min_battery:.0%}")
        elif ctx.battery_temp_c > o.max_battery_temp_c:
            ctx.stop(f"swan: battery at {ctx.battery_temp_c:.1f} C > {o.max_battery_temp_c:g} C, training declined")
        return None

    def on_batch_end(self, ctx, batch: int, record: BatchRecord) -> Plan | None:
        o = self.options
        ran = self._by_label.get(record.plan_label, self.level)
        expected = self.kept[ran].latency_max_s
        if o.interference_reference == "cpufreq":
            # the lower of the caps at the batch's start and end: a cap that cleared during the
            # batch still slowed its first part (the engine publishes caps as they change)
            end = ctx.caps_mhz
            caps = {cl: min(v, end.get(cl, v)) for cl, v in self._caps_at_start.items()} or dict(end)
            capped = capped_reference(ctx.plan_ctx, self.plans[ran], self.kept[ran], caps, self._capped_memo)
            if o.interference_ratio * expected < record.time_s <= o.interference_ratio * capped:
                self.throttled_batches += 1   # the idle profile would have read it as an app
            expected = capped
        ratio = record.time_s / expected if expected > 0 else 1.0
        if ratio > o.interference_ratio:
            self.interfered_batches += 1
            self.last_quiet_from_s = ctx.now_s
            if ran == self.level and self.level < len(self.kept) - 1:
                return self._move(ctx, batch, self.level + 1, "downgrade", ratio)
            return None
        if self.level > 0 and ctx.now_s - self.last_quiet_from_s >= o.upgrade_after_s:
            self.last_quiet_from_s = ctx.now_s
            return self._move(ctx, batch, self.level - 1, "upgrade", ratio)
        return None

    def _move(self, ctx, batch: int, level: int, kind: str, ratio: float) -> Plan:
        self.events.append({"t_s": round(ctx.now_s, 6), "batch": batch, "event": kind,
                            "from": self.kept[self.level].name, "to": self.kept[level].name,
                            "latency_ratio": round(ratio, 4)})
        self.level = level
        return self.plans[level]

    # ------------------------------------------------------------------ reporting
    def summary_extra(self) -> dict[str, Any]:
        def row(c: Choice) -> dict[str, Any]:
            return {"cores": c.name, "latency_s": round(c.latency_s, 6), "energy_j": round(c.energy_j, 6),
                    "latency_max_s": round(c.latency_max_s, 6),
                    "power_w": round(c.power_w, 4)}
        return {"choices": [row(c) for c in self.kept], "pruned": [row(c) for c in self.pruned],
                "start": self.kept[0].name if self.kept else None,
                "final": self.kept[self.level].name if self.kept else None,
                "events": self.events,
                "downgrades": sum(1 for e in self.events if e["event"] == "downgrade"),
                "upgrades": sum(1 for e in self.events if e["event"] == "upgrade"),
                "interfered_batches": self.interfered_batches,
                "throttled_batches": self.throttled_batches}
