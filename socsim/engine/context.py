"""What schedulers see, as the engine implements it: the SoC, the workload, graphs and the cost
model (PlanContext), plus the live state of a run for the runtime hooks (RunContext).  The
contract a scheduler relies on is their Protocols, :mod:`socsim.contract.context`."""
from __future__ import annotations

import math
import numbers

from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from socsim.contract.cores import big_cores, check_clusters_mhz, clusters_of, opp_for, pick_opp, resolve_cores
from socsim.errors import InputError
from socsim import reuse
from socsim.engine.oracle import CostOracle
from socsim.hw import units
from socsim.hw.units import unit_runs
from socsim.hw import fastrpc
from socsim.spec.soc import SocSpec
from socsim.spec.workload import Workload
from socsim.workload.ops import Op


def build_graph(model: str, input_chw: tuple[int, ...], num_classes: int, batch: int, precision: str,
                file: str | None = None, mode: str = "train"):
    """Model (zoo, plugin or ONNX file, relative to the workload ``file``) -> training graph -> precision translation (-> its forward pass alone, for
    ``mode`` inference); model errors become InputErrors."""
    from socsim.workload.graph import forward_only, training_graph
    from socsim.workload.model import ModelError
    from socsim.workload.precision import translate
    from socsim.workload.models import build_model

    try:
        g = translate(training_graph(build_model(model, input_chw, num_classes, file), batch), precision)
        return forward_only(g) if mode == "inference" else g
    except ModelError as e:
        raise InputError(e.message, file=file, field=e.field, value=e.value) from None


def _plan_key(plan) -> tuple:
    """What a batch template of ``plan`` depends on: every field but its free-form ``notes``
    (steps compare by content: frozen Steps of frozen Ops)."""
    return (plan.steps, plan.cpu_cores, plan.cpu_freq_mhz, plan.governor, plan.dsp_graph, plan.dsp_graph_bytes,
            plan.cpu_graph_prep_s, plan.prep_overheads, plan.shared_buffers, plan.micro_batches,
            plan.peak_memory_bytes, plan.step_memory, plan.label)


class PlanContext:
    """The planning view of a run (implements :class:`socsim.contract.PlanContext`).  ``profile``
    is the cost model, memoised."""

    def __init__(self, soc: SocSpec, workload: Workload, oracle: CostOracle, file: str | None = None,
                 precision: str | None = None) -> None:
        self.soc = soc
        self.workload = workload
        self.file = file
        #: what ``graph()`` translates to by default: the scheduler's own precision (its class
        #: attribute, as the summary reports it), else the workload's
        self.precision = precision or workload.precision
        self.oracle = oracle
        self.rng = np.random.default_rng(workload.seed)
        self._graphs: dict[tuple, Any] = {}
        from socsim.engine.batch import BatchWalker
        self.walker = BatchWalker(soc, oracle)

    # -- the training graph -------------------------------------------------------------
    def graph(self, precision: str | None = None, batch: int | None = None):
        """The (precision-translated) training graph of one batch; ``precision`` defaults to the
        run's (the scheduler's own, else the workload's)."""
        w = self.workload
        key = (precision or self.precision, batch or w.batch_size)
        g = self._graphs.get(key)
        if g is None:
            g = self._graphs[key] = build_graph(w.model, tuple(w.input), w.num_classes, key[1], key[0], self.file,
                                                     w.mode)
            self._check_fits(g)
        return g

    def _check_fits(self, g) -> None:
        """The model's parameters, gradients and optimizer state must fit the phone's DRAM before
        any batch does: an InputError on ``model`` that says so (no batch size could help)."""
        cap = self.soc.dram.capacity_gb * (1 << 30)
        if g.persistent_bytes > cap:
            raise InputError(f"the model's parameters ({g.param_count:,}) with their gradients take "
                             f"{g.persistent_bytes / (1 << 30):.1f} GiB, more than the "
                             f"{self.soc.dram.capacity_gb:g} GiB DRAM of {self.soc.name}: no batch size "
                             "or memory budget fits it", file=self.file, field="model", value=self.workload.model)

    def precision_of(self, plan) -> str | None:
        """The precision of the graph a plan's steps were taken from: of the graphs ``graph()``
        built, the precision whose ops most of the steps are (by identity; fused, rewritten and
        micro-batch ops belong to none); None when no step is an op of any of them."""
        counts: dict[str, int] = {}
        ids = {id(st.op) for st in plan.steps}
        for (prec, _batch), g in self._graphs.items():
            n = sum(1 for op in g.ops if id(op) in ids)
            if n:
                counts[prec] = counts.get(prec, 0) + n
        return max(sorted(counts), key=lambda p: counts[p]) if counts else None

    # -- cores and operating points ----------------------------------------------------
    def cores(self, spec: str | list[int] | tuple[int, ...] | None = None, default: str = "big4",
              field: str | None = None) -> tuple[int, ...]:
        """Resolve a core-set name; ``None`` means the workload's ``cpu.cores`` or ``default``.
        ``field`` names where ``spec`` came from in errors (default: ``cpu.cores``, right when
        ``spec`` is None; a scheduler resolving its own option passes the option's field, e.g.
        ``scheduler.options.cpu_cores``).  A ``spec`` the scheduler made up itself (no ``field``)
        that does not name a core set of the SoC is a ValueError: the scheduler's error, not the
        workload's."""
        if spec is None:
            spec = self.workload.cpu.cores if self.workload.cpu.cores is not None else default
            if spec == "big4" and len(self._big()) < 4:
                spec = f"big{len(self._big())}"
            field = "cpu.cores"
        elif field is None:
            try:
                return resolve_cores(self.soc, spec)
            except InputError as e:
                raise ValueError(f"ctx.cores({spec!r}): {e.message}") from None
        return resolve_cores(self.soc, spec, field=field)

    def _big(self) -> list[int]:
        return big_cores(self.soc)

    def freqs(self, cores: tuple[int, ...], setting: str | float | dict = "max") -> tuple[tuple[str, float], ...]:
        """Per-cluster frequency of the clusters ``cores`` span, for a max|mid|min|MHz setting
        (or a dict of them by cluster name; a cluster left out runs at max).  MHz between OPPs are
        floored to one, as ``cpu.freq`` is; a setting none of those clusters can run (above the top
        OPP of all of them, below the lowest) is a ValueError, as it would be in a plan."""
        clusters = clusters_of(self.soc, cores)
        out = []
        for c in clusters:
            s = setting.get(c.name, "max") if isinstance(setting, dict) else setting
            if isinstance(s, str):
                if s not in ("max", "mid", "min"):
                    raise ValueError(f"ctx.freqs(): frequency setting {s!r}; expected max, mid, min or MHz")
            elif isinstance(s, bool) or not isinstance(s, numbers.Real) or not math.isfinite(s):
                raise ValueError(f"ctx.freqs(): frequency setting {s!r}; expected max, mid, min or MHz")
            else:
                scope = [c] if isinstance(setting, dict) else clusters
                try:
                    check_clusters_mhz(self.soc, scope, s, "ctx.freqs")
                except InputError as e:
                    raise ValueError(f"ctx.freqs(): {s:g} MHz is {e.message}") from None
            out.append((c.name, pick_opp(c, cast(float, s))))
        return tuple(sorted(out))

    # -- profiling -----------------------------------------------------------------------
    def profile(self, op: Op, unit: str, cores: tuple[int, ...] | None = None,
                freq: str | float | dict = "max", dsp_mhz: float | None = None) -> float:
        """Latency of ``op`` on ``unit`` (seconds; inf if unsupported)."""
        u = units.unit(unit)
        if u.host:
            cores = cores or self.cores()
            cfg = self.oracle.config(unit, cores=cores, freqs=self.freqs(cores, freq))
        elif not u.present(self.soc):
            return float("inf")
        elif u.domain == "cdsp":   # the cDSP's units (HVX, HMX) train at the workload's clock, or dsp_mhz
            cfg = self.oracle.config(unit, mhz=dsp_mhz or self.dsp_mhz)
        else:                 # any other unit at its default clock
            cfg = self.oracle.config(unit)
        return self.oracle.time_s(op, unit, cfg)

    def estimate(self, plan, freq: str | float | dict | None = None, temp_c: float | None = None,
                 first_batch: bool = False) -> tuple[float, float]:
        """(time_s, energy_j) of one batch of ``plan`` at steady operating points, as a profiling
        run on the idle phone would measure them (whole-phone energy, rails at ``temp_c``,
        default the ambient temperature).  ``freq`` defaults to the plan's fixed frequencies,
        else the top OPP of the clusters it uses.  A batch after the first: a DSP graph the plan
        prepares once (``dsp_graph="reuse"``) is ready; ``first_batch=True`` costs the batch that
        prepares it.  A plan placing an op on a unit that cannot run it costs (inf, inf), as
        :meth:`profile` does for the op."""
        if not all(unit_runs(self.soc, st.op, st.unit) for st in plan.steps):
            return math.inf, math.inf
        freqs = self._estimate_freqs(plan, freq)
        prep = plan.dsp_graph == "per_batch" or (first_batch and plan.dsp_graph == "reuse")
        t = self.workload.environment.ambient_c if temp_c is None else temp_c
        memo: dict | None = None
        if reuse.enabled():
            # a fleet's clients profile the same plans on the same phone: one template each
            memo = reuse.table("estimates", (reuse.spec_key(self.soc), self.oracle.dsp_batch_padding))
            key = (_plan_key(plan), tuple(sorted(freqs.items())), prep, t)
            hit = memo.get(key)
            if hit is not None:
                return hit
        tpl = self.walker.template(plan, freqs, prep)
        static = self.walker.static_mw(plan, freqs, tpl, lambda rail: t)
        out = tpl.duration_s, float(tpl.dyn_energy_j.sum() + static.sum() * 1e-3 * tpl.duration_s)
        if memo is not None:
            memo[key] = out
        return out

    def estimate_switch(self, plan, freq: str | float | dict | None = None,
                        temp_c: float | None = None, after=None) -> tuple[float, float]:
        """(time_s, energy_j) of the CPU configuration switch the engine charges before a batch
        of ``plan`` that changes cores or frequencies (``soc.cpu.config_switch_ms``): one core of
        the first cluster doing the kernel's work, plus every rail's static power (whole-phone
        energy) with ``plan``'s cores powered.  The engine runs it at the operating point of the
        batch it follows, ``after`` (``freq`` as in :meth:`estimate`; default ``plan``'s own)."""
        freqs = self._estimate_freqs(plan if after is None else after, freq)
        tpl = self.walker.switch_template(freqs)
        t = self.workload.environment.ambient_c if temp_c is None else temp_c
        static = self.walker.static_mw(plan, freqs, tpl, lambda rail: t)
        return tpl.duration_s, float(tpl.dyn_energy_j.sum() + static.sum() * 1e-3 * tpl.duration_s)

    def _estimate_freqs(self, plan, freq: str | float | dict | None) -> dict[str, float]:
        """The operating point of :meth:`estimate`: every cluster at its lowest OPP but those the
        plan uses (``freq``, default their top OPP; the plan's fixed frequencies win)."""
        freqs = {c.name: c.min_mhz for c in self.soc.cpu.clusters}
        used = self.freqs(plan.cpu_cores, "max" if freq is None else freq) if plan.cpu_cores else ()
        freqs.update(dict(used))
        if plan.cpu_freq_mhz:
            freqs.update(dict(plan.cpu_freq_mhz))
        if self.soc.dsp is not None:
            freqs["dsp"] = self.dsp_mhz
            if self.soc.dsp.hmx is not None:
                freqs["hmx"] = self.dsp_mhz
        if self.soc.gpu is not None:
            freqs["gpu"] = self.soc.gpu.opps[-1].freq_mhz
        return freqs

    def prefetch(self, plans, freq: str | float | dict | None = None) -> None:
        """Cost, ahead of :meth:`estimate` of each of ``plans`` (at ``freq``), the CPU ops those
        estimates will ask for, in parallel where that pays (:meth:`CostOracle.warm_cpu`).  The
        estimates are then what they would have been, only sooner: a scheduler profiling many
        core sets (min-energy: 7 core sets x 3 levels) spends nearly all its time in the CPU
        model's cache simulation of every op on every core set."""
        pairs: list[tuple] = []
        for plan in plans:
            if not plan.cpu_cores:
                continue
            cfg = self.walker.cpu_config(plan, self._estimate_freqs(plan, freq))
            pairs.extend((s.op, cfg) for s in plan.steps if s.unit == "cpu")
        self.oracle.warm_cpu(pairs)

    def busy_s(self, plan, freqs: dict[str, float]) -> tuple[dict[str, float], float]:
        """Busy seconds per unit and cluster of one batch of ``plan`` at ``freqs`` (every
        cluster's, the DSP's and the GPU's clock), as schedutil would see them, and the batch's
        duration (no graph preparation)."""
        tpl = self.walker.template(plan, freqs, False)
        return tpl.busy_s, tpl.duration_s

    def idle_power_w(self) -> float:
        """The idle phone's power (every rail's idle draw), in watts."""
        return sum(self.walker.power.idle_mw().values()) * 1e-3

    @property
    def dsp_mhz(self) -> float:
        """The DSP's clock: the workload's ``dsp.freq_mhz`` floored to the DSP OPP at or below it
        (as ``cpu.freq`` is; the engine refuses one outside the OPP range), else the SoC's
        training clock."""
        f = self.workload.dsp.freq_mhz
        dsp = self.soc.dsp
        assert dsp is not None, "the DSP clock of a SoC without a DSP"
        if f is None:
            return dsp.training_clock_mhz
        return opp_for([o.freq_mhz for o in dsp.opps], f)

    def switch_s(self, bytes_crossing: int, shared_buffers: bool = False, unit: str = "dsp",
                 host_speed: float = 1.0) -> float:
        """One hand-over between the CPU and ``unit`` moving ``bytes_crossing`` bytes: a FastRPC
        call for the DSP, a queue drain and a layout copy for the GPU (inf without the unit).
        ``host_speed``: the calling core's (socsim.hw.host.host_speed; the FastRPC copy's host
        code scales with it)."""
        if unit == "gpu":
            if self.soc.gpu is None:
                return float("inf")
            from socsim.hw.gpu import cpu_gpu_switch_s
            return cpu_gpu_switch_s(self.soc, bytes_crossing)
        if self.soc.fastrpc is None:
            return float("inf")
        return fastrpc.switch_s(self.soc.fastrpc, bytes_crossing, shared_buffers, host_speed)

    def memory_budget_bytes(self, t_s: float = 0.0) -> int | None:
        for from_s, until_s, cap in budget_steps_bytes(self.workload.environment.memory_budget_mb):
            if from_s <= t_s < until_s:
                return cap
        return None


@dataclass
class RunContext:
    """Live state handed to runtime hooks (implements :class:`socsim.contract.RunContext`).  Read
    it; change the run by returning a Plan.

    ``now_s`` is the time of what the hook reacts to: a batch's start or end, the governor poll
    that crossed a trip (``on_thermal_trip``, whose ``temps_c`` are that poll's readings), a
    memory-budget step, a foreground load starting or ending.  ``interference_cores`` are the
    cores of every foreground load running at ``now_s`` (docs/plugins.md, section 3).

    ``step_in_progress`` is set while ``on_memory_pressure`` runs during a batch: the index of
    the plan step then running (between steps, the last one begun; -1 in the batch's
    preparation, before any step); None otherwise.  Such a hook may call
    :meth:`continue_batch`."""

    plan_ctx: PlanContext
    now_s: float = 0.0
    batch: int = 0
    temps_c: dict[str, float] = field(default_factory=dict)
    battery_soc: float = 1.0
    battery_temp_c: float = 25.0
    charging: bool = True
    caps_mhz: dict[str, float] = field(default_factory=dict)
    interference_cores: tuple[int, ...] = ()
    plan: Any = None
    stop_requested: str | None = None
    step_in_progress: int | None = None
    _continuation: Any = field(default=None, init=False, repr=False)

    @property
    def soc(self) -> SocSpec:
        return self.plan_ctx.soc

    @property
    def workload(self) -> Workload:
        return self.plan_ctx.workload

    def continue_batch(self, plan) -> None:
        """Finish the batch in progress with ``plan`` instead of the running one (Sage re-splits
        mid-iteration when the memory budget drops).  Only from ``on_memory_pressure`` while
        ``step_in_progress`` is set.  ``plan``'s steps up to and including the step in progress
        must be the running plan's (that step goes on; from it on, ``plan.step_memory`` is the
        memory in use; with -1 there is none, and every step may be replaced), its cores and
        operating point the same, and it brings no DSP steps into a batch that has none (the DSP
        graph was not prepared); its later steps replace the running plan's, its
        ``prep_overheads`` are paid once the step in progress is done (with -1, once the batch's
        preparation is), and its ``micro_batches`` and ``label`` describe the batch as run.  The
        hook's return value is still the plan for the batches after this one."""
        self._continuation = plan

    def stop(self, reason: str) -> None:
        """Ask the engine to end the run: from ``on_batch_start`` before that batch runs (e.g.
        Swan's gates: not charging, battery low or hot), from any other hook after the batch in
        progress."""
        self.stop_requested = reason


def budget_intervals(budget_mb) -> list[tuple[float, float, float]]:
    """The workload's memory budget as (from_s, until_s, MB) intervals: a number holds for all
    time; a profile's steps each hold from their ``at_s`` to the next one's (of two steps at one
    time, the later listed holds), and before its first step there is no budget (a profile
    starting at ``at_s: 30`` leaves the first 30 s unbounded); [] without a budget."""
    if budget_mb is None:
        return []
    if isinstance(budget_mb, (int, float)):
        return [(-math.inf, math.inf, float(budget_mb))]
    steps = sorted(budget_mb, key=lambda st: st.at_s)
    out = []
    for i, st in enumerate(steps):
        start = st.at_s
        end = steps[i + 1].at_s if i + 1 < len(steps) else math.inf
        out.append((start, end, st.mb))
    return out


def budget_steps_bytes(budget_mb) -> list[tuple[float, float, int]]:
    """:func:`budget_intervals` in bytes."""
    return [(start, end, int(mb * (1 << 20))) for start, end, mb in budget_intervals(budget_mb)]
