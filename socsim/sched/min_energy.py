"""Min-Energy: per-batch CPU configuration under a time budget (energy-efficient federated
training on mobile CPUs, IEEE; docs/seeds.md 4).

A configuration is (core set, frequency level): Big 1x/2x/4x, Little 1x/2x/4x and Hybrid 8x at
high/medium/low frequency (on the SD855 big 2.4/1.6/0.8 GHz, little 1.8/1.2/0.6 GHz: 1, 2/3 and
1/3 of each cluster's top OPP, which is how the levels generalise to other SoCs).  Each
configuration's batch time and energy come from a profiling estimate (``ctx.estimate``, the
paper's models learned from profiling runs).  The DP of :func:`socsim.sched.dp.min_energy_sequence`
picks the configuration of every batch, minimising energy subject to the run's time <= theta_t,
with the time and energy of switching configuration between adjacent batches included.

``mode`` gives the comparisons: ``fixed`` runs one named configuration throughout, ``governor``
leaves the frequency to the workload's governor on the workload's cores.

Composition (``base``): min-energy's DVFS on top of another scheduler's plans, e.g.
``{name: min-energy, options: {base: {name: mandheling}}}``.  The base scheduler decides
placement, core set and micro-batching (and keeps switching its plans at runtime); min-energy
chooses only the frequency level of the base's CPU clusters per batch, by the same DP.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from socsim.contract.cores import UNKNOWN_CORE_SET, clusters_of, core_set_error, is_core_set_name
from socsim.errors import InputError, ScheduleError
from socsim.contract import BaseScheduler, Plan, check_plan
from socsim.contract import single_unit_plan
from socsim.sched.dp import min_energy_sequence

CORE_SETS = ("big1", "big2", "big4", "little1", "little2", "little4", "hybrid8")
# frequency levels as fractions of each cluster's top OPP (pub:devices.sd855: 2.4/1.6/0.8 GHz
# big, 1.8/1.2/0.6 GHz little)
LEVELS = {"high": 1.0, "medium": 2.0 / 3.0, "low": 1.0 / 3.0}




def _located_errors(title: str, errors: list[tuple[tuple[str | int, ...], Any, str]]) -> ValidationError:
    """A ValidationError whose errors sit at the given locations, relative to the field whose
    validator raises it (pydantic keeps them), so that an error of a base scheduler's option
    names it: ``scheduler.options.base.options.<option>``.  ``errors``: (location, input,
    message) triples."""
    return ValidationError.from_exception_data(title, [
        InitErrorDetails(type=PydanticCustomError("value_error", msg.replace("{", "(").replace("}", ")")),
                         loc=loc, input=value) for loc, value, msg in errors])


class BaseRef(BaseModel):
    """The base scheduler of a composed run, checked without a SoC: it must be a registered,
    working scheduler other than min-energy, and its options must be valid for it."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    name: str
    options: dict[str, Any] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _known(cls, v: str) -> str:
        from socsim.sched import registry

        entries = registry.discover()
        entry = entries.get(v)
        if entry is None:
            known = ", ".join(n for n, e in entries.items() if e.cls is not None and n != MinEnergy.name)
            raise ValueError(f"unknown scheduler; known: {known}")
        if entry.cls is None:
            raise ValueError(f"scheduler plugin {entry.target!r} is broken: {entry.error}")
        if v == MinEnergy.name or (isinstance(entry.cls, type) and issubclass(entry.cls, MinEnergy)):
            raise ValueError("min-energy cannot compose with itself")
        return v

    @field_validator("options")
    @classmethod
    def _valid_for_base(cls, v: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        from socsim.sched import registry

        name = info.data.get("name")
        entry = registry.discover().get(name) if name is not None else None
        if entry is None or entry.cls is None:
            return v  # the name's own error is reported
        try:
            entry.cls.Options.model_validate(v)
        except ValidationError as e:
            raise _located_errors("base options", [
                (tuple(err["loc"]), err.get("input"),
                 f"base scheduler {name!r}: "
                 + ("unknown option" if err["type"] == "extra_forbidden"
                    else str(err["msg"]).removeprefix("Value error, "))) for err in e.errors()]) from None
        return v


class MinEnergyOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    base: BaseRef | None = Field(None, description="compose: another scheduler's plans, min-energy's frequency levels")
    mode: Literal["dp", "fixed", "governor"] = Field("dp", description="dp: per-batch DP; fixed: one configuration; governor: the workload's governor")
    time_budget_s: float | None = Field(None, gt=0, description="theta_t for the whole run in seconds (overrides slack)")
    # slack 1.2: assumption (docs/seeds.md 4: theta_t is the user's deadline, no value given): 20%
    # over the fastest configuration's run time; the workload can set slack or time_budget_s.
    slack: float = Field(1.2, gt=0, description="theta_t = slack x the run time of the fastest configuration")
    config: str = Field("big4@high", description="the configuration of mode=fixed, '<core set>@<high|medium|low>'")
    core_sets: list[str] = Field(list(CORE_SETS), min_length=1, description="core sets explored")
    levels: list[Literal["high", "medium", "low"]] = Field(list(LEVELS), min_length=1, description="frequency levels explored")
    energy: Literal["training", "phone"] = Field("training", description="energy minimised: training-attributable (the idle phone's baseline subtracted) or whole-phone")
    # max_front 64: a numerical parameter of the DP (how many non-dominated (T, E) triples
    # survive per configuration and batch), not from the paper, whose DP keeps them all
    # (max_front None); assumption that 64 loses little energy.
    max_front: int | None = Field(64, ge=2, description="DP triples kept per configuration and batch (None: exact)")

    @field_validator("config")
    @classmethod
    def _config(cls, v: str) -> str:
        cores, at, level = v.partition("@")
        if not at or level not in LEVELS or not is_core_set_name(cores):
            raise ValueError(f"configuration {v!r}: expected '<core set>@<level>', a core set such as "
                             f"{', '.join(CORE_SETS)} and a level {'|'.join(LEVELS)}")
        problem = core_set_error(cores)
        if problem:
            raise ValueError(f"configuration {v!r}: {problem}")
        return v

    @field_validator("core_sets")
    @classmethod
    def _core_sets(cls, v: list[str]) -> list[str]:
        for name in v:
            problem = core_set_error(name)
            if problem == UNKNOWN_CORE_SET:
                raise ValueError(f"unknown core set {name!r}; expected big<N>, little<N>, prime1, hybrid8, all "
                                 "or core ids as digits ('456')")
            if problem:
                raise ValueError(f"core set {name!r}: {problem}")
        return _once(v, "core set")

    @field_validator("levels")
    @classmethod
    def _levels(cls, v: list[str]) -> list[str]:
        return _once(v, "level")


def _once(v: list[str], what: str) -> list[str]:
    """``v`` if no entry repeats (a repeat would profile and weigh one configuration twice)."""
    twice = sorted({n for n in v if v.count(n) > 1})
    if twice:
        raise ValueError(f"{what} given more than once: {', '.join(twice)}")
    return v


def _sequence(t_row: list[float], e_row: list[float], n_batches: int, theta: float, sw_t: float,
              sw_e: list[list[float]], max_front: int | None):
    """The DP over ``n_batches`` identical batches (every batch has the rows ``t_row``/``e_row``),
    memoised on its inputs inside :func:`socsim.reuse.reusing` (a fleet's clients with the
    same phone, configuration profile, batch count and budget share one DP)."""
    from socsim import reuse

    def solve():
        return min_energy_sequence([t_row] * n_batches, [e_row] * n_batches, theta,
                                   lambda a, b: sw_t, lambda a, b: sw_e[a][b], max_front=max_front)

    if not reuse.enabled():
        return solve()
    memo = reuse.table("min-energy-dp", None)
    key = (tuple(t_row), tuple(e_row), n_batches, theta, sw_t, tuple(map(tuple, sw_e)), max_front)
    if key not in memo:
        memo[key] = solve()
    return memo[key]


class MinEnergy(BaseScheduler):
    name = "min-energy"
    description = "Min-Energy: per-batch CPU configuration by DP under a time budget (SD855 study)"
    Options = MinEnergyOptions

    def __init__(self, options: MinEnergyOptions | None = None) -> None:
        super().__init__(options)
        self.info: dict[str, Any] = {}
        self.plans: dict[str, Plan] = {}
        self.sequence: tuple[str, ...] = ()
        self.base = None
        self._end_s: float | None = None  # end of the last batch run (ctx.now_s at on_batch_end)
        self._variants: dict[tuple[int, str], Plan] = {}
        self._base_of: dict[int, Plan] = {}  # id(variant) -> the base plan it scales
        self._level_of: dict[int, str] = {}  # id(variant) -> its frequency level
        self._base_plan: Plan | None = None

    # ------------------------------------------------------------------ configurations
    @staticmethod
    def config_freqs(ctx, cores: tuple[int, ...], level: str) -> tuple[tuple[str, float], ...]:
        """Each cluster of ``cores`` at the OPP nearest ``LEVELS[level]`` x its top OPP."""
        out = []
        for c in clusters_of(ctx.soc, cores):
            want = LEVELS[level] * c.max_mhz
            out.append((c.name, min((o.freq_mhz for o in c.opps), key=lambda f: abs(f - want))))
        return tuple(sorted(out))

    def config_plan(self, ctx, graph, name: str, field: str = "scheduler.options.config") -> Plan:
        """The plan of configuration ``name`` (``big2@low``); if the SoC lacks its cores, an
        InputError naming ``field`` and the configuration."""
        cores_name, _, level = name.partition("@")
        if level not in LEVELS:
            raise InputError(f"configuration {name!r}: level must be one of {', '.join(LEVELS)}",
                             field=field, value=name)
        try:
            cores = ctx.cores(cores_name, field=field)
        except InputError as e:
            raise InputError(f"{ctx.soc.name} cannot run configuration {name!r}: {e.message}",
                             field=field, value=name) from None
        return single_unit_plan(graph, "cpu", cores, name,
                                cpu_freq_mhz=self.config_freqs(ctx, cores, level))

    # ------------------------------------------------------------------ planning
    def _variant(self, ctx, base_plan: Plan, level: str) -> Plan:
        """The base scheduler's plan with its CPU clusters fixed at ``level`` (memoised, so the
        engine sees the same Plan object and reuses its batch template)."""
        key = (id(base_plan), level)
        v = self._variants.get(key)
        if v is None:
            v = self._variants[key] = replace(
                base_plan, cpu_freq_mhz=self.config_freqs(ctx, base_plan.cpu_cores, level), governor=None,
                label=f"{base_plan.label} @{level}")
            self._base_of[id(v)] = base_plan  # both kept alive by the dictionaries: ids stay unique
            self._level_of[id(v)] = level
        return v

    def plan(self, ctx) -> Plan:
        o = self.options
        if o.base is not None:
            return self._plan_composed(ctx)
        graph = ctx.graph(self.precision)
        if o.mode == "governor":
            cores = ctx.cores(default="big4")
            plan = single_unit_plan(graph, "cpu", cores, f"governor {ctx.workload.cpu.governor}")
            self.info = {"mode": "governor", "governor": ctx.workload.cpu.governor, "cores": list(cores)}
            return plan
        if o.mode == "fixed":
            plan = self.config_plan(ctx, graph, o.config, field="scheduler.options.config")
            ctx.prefetch([plan])
            t, e = ctx.estimate(plan)
            self.info = {"mode": "fixed", "config": o.config,
                         "profiled": {"time_s": round(t, 6), "energy_j": round(e, 6)}}
            return plan
        return self._plan_dp(ctx, graph)

    def _plan_dp(self, ctx, graph) -> Plan:
        o = self.options
        # core sets the user named must exist on the SoC; the default ones are skipped where
        # the SoC lacks them (the configuration space generalised per SoC)
        strict = "core_sets" in o.model_fields_set
        core_sets = []
        for cs in o.core_sets:
            try:
                ctx.cores(cs, field="scheduler.options.core_sets")
            except InputError as e:
                if strict:
                    raise InputError(f"{ctx.soc.name} cannot run core set {cs!r}: {e.message}",
                                     field="scheduler.options.core_sets", value=cs) from None
                continue
            core_sets.append(cs)
        if not core_sets:
            raise InputError(f"{ctx.soc.name} can run none of the core sets", field="scheduler.options.core_sets",
                             value=list(o.core_sets))
        names = [f"{cs}@{lv}" for cs in core_sets for lv in o.levels]
        # the idle phone draws its baseline whether it trains or not (a federated client is on
        # anyway); "training" energy is what training adds, as the configurations' power models
        # of the paper measure it
        idle_w = ctx.idle_power_w() if o.energy == "training" else 0.0
        for name in names:
            self.plans[name] = self.config_plan(ctx, graph, name, field="scheduler.options.core_sets")
        ctx.prefetch(self.plans.values())
        profile: dict[str, tuple[float, float]] = {}
        for name, plan in self.plans.items():
            t, e = ctx.estimate(plan)
            profile[name] = (t, e - idle_w * t)
        # drop configurations another beats on both time and energy (no trade-off in them)
        cands = [n for n in profile if not any(
            m != n and profile[m][0] <= profile[n][0] and profile[m][1] <= profile[n][1]
            and profile[m] != profile[n] for m in profile)]
        n_batches = ctx.workload.total_batches
        fastest = min(profile, key=lambda n: profile[n][0])
        theta = self._budget(n_batches, fastest, profile[fastest][0])
        sw_t, sw_e = self._switch_costs(ctx, [self.plans[n] for n in cands], idle_w)
        t_row = [profile[n][0] for n in cands]
        e_row = [profile[n][1] for n in cands]
        res = _sequence(t_row, e_row, n_batches, theta, sw_t, sw_e, o.max_front)
        # an infeasible budget was refused by _budget; the DP finds nothing only when the budget
        # is the fastest run's time to rounding (slack 1): that run meets it
        if res is None:
            self.sequence = (fastest,) * n_batches
            pred_t, pred_e = n_batches * profile[fastest][0], n_batches * profile[fastest][1]
        else:
            self.sequence = tuple(cands[c] for c in res.configs)
            pred_t, pred_e = res.time_s, res.energy_j
        fixed_ok = {n: profile[n][1] * n_batches for n in profile if profile[n][0] * n_batches <= theta}
        best_fixed = min(fixed_ok, key=fixed_ok.get) if fixed_ok else None
        self.info = {
            "mode": "dp",
            "energy": o.energy,
            "theta_t_s": round(theta, 6),
            "feasible": True,
            "configs": {n: {"time_s": round(t, 6), "energy_j": round(e, 6)} for n, (t, e) in profile.items()},
            "pareto": cands,
            "fastest": fastest,
            "least_energy": min(profile, key=lambda n: profile[n][1]),
            "sequence": _runs(self.sequence),
            "predicted": {"time_s": round(pred_t, 6), "energy_j": round(pred_e, 6)},
            "best_fixed_within_budget": best_fixed,
            "best_fixed_energy_j": round(fixed_ok[best_fixed], 6) if best_fixed else None,
            "dp_states_max": res.max_states if res else 0,
            "dp_approximate": bool(res and res.approximate),
        }
        return self.plans[self.sequence[0]]

    @staticmethod
    def _switch_costs(ctx, plans: list[Plan], idle_w: float) -> tuple[float, list[list[float]]]:
        """The configuration switch's time and, for a switch from each of ``plans`` (a) into each
        (b), its energy ``[a][b]`` as the engine charges it (``PlanContext.estimate_switch``:
        one core doing the kernel's work at the operating point of the batch it follows, a's,
        plus the rails' static power with b's cores powered), less the idle baseline when the DP
        minimises training energy."""
        def cost(a: Plan, b: Plan) -> float:
            t, e = ctx.estimate_switch(b, after=a)
            return max(0.0, e - idle_w * t)

        return ctx.soc.cpu.config_switch_ms * 1e-3, [[cost(a, b) if a is not b else 0.0 for b in plans] for a in plans]

    def _plan_composed(self, ctx) -> Plan:
        from socsim.sched.registry import create

        o = self.options
        if o.base.name == self.name:
            raise InputError("min-energy cannot compose with itself", field="scheduler.options.base.name",
                             value=o.base.name)
        with _as_base():
            self.base = create(o.base.name, o.base.options)
            base_plan = self.base.plan(ctx)
        self._base_plan = base_plan
        if not base_plan.cpu_cores:
            raise InputError(f"base scheduler {o.base.name!r} uses no CPU cores: nothing to scale",
                             field="scheduler.options.base.name", value=o.base.name)
        idle_w = ctx.idle_power_w() if o.energy == "training" else 0.0
        profile = {}
        for lv in o.levels:
            t, e = ctx.estimate(self._variant(ctx, base_plan, lv))
            profile[lv] = (t, e - idle_w * t)
        n_batches = ctx.workload.total_batches
        fastest = min(profile, key=lambda n: profile[n][0])
        # a DSP graph the base prepares once is prepared in the first batch, whatever the level
        # (the variants share it): a one-off the run's time includes and the batches' do not
        once_s = ctx.estimate(self._variant(ctx, base_plan, fastest), first_batch=True)[0] - profile[fastest][0]
        theta = self._budget(n_batches, f"{o.base.name} @{fastest}", profile[fastest][0], once_s)
        cands = list(profile)
        sw_t, sw_e = self._switch_costs(ctx, [self._variant(ctx, base_plan, n) for n in cands], idle_w)
        res = min_energy_sequence([[profile[n][0] for n in cands]] * n_batches,
                                  [[profile[n][1] for n in cands]] * n_batches, theta - once_s,
                                  lambda a, b: sw_t, lambda a, b: sw_e[a][b], max_front=o.max_front)
        self.sequence = tuple(cands[c] for c in res.configs) if res else (fastest,) * n_batches
        base_info = _base_summary(self.base)
        self.info = {"mode": "compose", "base": o.base.name, "energy": o.energy, "theta_t_s": round(theta, 6),
                     "feasible": True, "first_batch_prep_s": round(once_s, 6),
                     "levels": {n: {"time_s": round(t, 6), "energy_j": round(e, 6)} for n, (t, e) in profile.items()},
                     "sequence": _runs(self.sequence), "base_info": base_info}
        return self._variant(ctx, base_plan, self.sequence[0])

    def _budget(self, n_batches: int, fastest: str, fastest_s: float, once_s: float = 0.0) -> float:
        """theta_t of the run; a budget below the fastest run (``fastest`` every batch, no
        switch, plus the one-off ``once_s`` of the first batch) cannot be met: a ScheduleError
        naming the budget's field and value."""
        o = self.options
        least = n_batches * fastest_s + once_s
        if o.time_budget_s is not None:
            theta = o.time_budget_s
            field, value, what = "scheduler.options.time_budget_s", o.time_budget_s, f"time budget {theta:.6g} s"
        else:
            theta = o.slack * least
            field, value, what = ("scheduler.options.slack", o.slack,
                                  f"slack {o.slack:g} gives a time budget of {theta:.6g} s, which")
        # a sequence's time is a sum of n batch times: allow its rounding (slack 1 is feasible)
        if least > theta * (1 + 1e-9):
            raise ScheduleError(
                f"{what} is below the minimum feasible run time {least:.6g} s ({n_batches} batches of "
                f"{fastest}, the fastest configuration, at {fastest_s:.6g} s each"
                + (f", and {once_s:.6g} s preparing the DSP graph in the first" if once_s > 0 else "")
                + f"); a time budget needs "
                f"slack >= 1 or time_budget_s >= {least:.6g}", field=field, value=value)
        return theta

    def _level(self, batch: int) -> str:
        return self.sequence[min(batch, len(self.sequence) - 1)]

    # ------------------------------------------------------------------ runtime hooks
    # Composed, every hook goes to the base first, seeing the run as the base would: ``ctx.plan``
    # is the base's own plan behind the running variant, and ``record.plan_label`` its label.
    # A plan the base returns replaces the base plan; min-energy returns it at its own level.
    def _base_view(self, ctx):
        base_plan = self._base_of.get(id(ctx.plan), ctx.plan)
        return ctx if base_plan is ctx.plan else replace(ctx, plan=base_plan)

    def _call_base(self, hook: str, ctx, *args) -> Plan | None:
        """The base's hook; a plan it returns is checked as the base's (errors name
        ``scheduler.options.base.name``, not min-energy, whose variant of it runs)."""
        view = self._base_view(ctx)
        with _as_base():
            p = getattr(self.base, hook)(view, *args)
            if p is not None:
                pctx = ctx.plan_ctx
                check_plan(p, pctx.soc, scheduler=self.options.base.name, hook=f"{hook}()",
                           batch_size=pctx.workload.batch_size)
        if view is not ctx and view.stop_requested and view.stop_requested != ctx.stop_requested:
            ctx.stop(view.stop_requested)
        if view is not ctx and view._continuation is not None:
            # the base finishes the batch in progress with another plan: its variant at the
            # level this batch runs at
            running = ctx.plan
            level = self._level_of.get(id(running))
            cont = view._continuation
            view._continuation = None
            ctx.continue_batch(cont if level is None else self._variant(ctx.plan_ctx, cont, level))
        if p is not None:
            self._base_plan = p
        return p

    def on_batch_start(self, ctx, batch: int) -> Plan | None:
        if self.base is not None:
            self._call_base("on_batch_start", ctx, batch)
            return self._variant(ctx.plan_ctx, self._base_plan, self._level(batch))
        if not self.sequence:
            return None
        return self.plans[self._level(batch)]

    def on_batch_end(self, ctx, batch: int, record) -> Plan | None:
        self._end_s = ctx.now_s
        if self.base is not None:
            base_plan = self._base_of.get(id(ctx.plan))
            if base_plan is not None and record.plan_label != base_plan.label:
                record = replace(record, plan_label=base_plan.label)
            if self._call_base("on_batch_end", ctx, batch, record) is not None:
                return self._variant(ctx.plan_ctx, self._base_plan, self._level(batch + 1))
        return None

    def _forward(self, hook: str, ctx, *args) -> Plan | None:
        """A hook between batch boundaries: the plan (if any) runs from the next batch start,
        where ``on_batch_start`` sets that batch's level again."""
        if self.base is not None and self._call_base(hook, ctx, *args) is not None:
            return self._variant(ctx.plan_ctx, self._base_plan, self._level(ctx.batch + 1))
        return None

    def on_thermal_trip(self, ctx, event) -> Plan | None:
        return self._forward("on_thermal_trip", ctx, event)

    def on_memory_pressure(self, ctx, budget_bytes: int) -> Plan | None:
        return self._forward("on_memory_pressure", ctx, budget_bytes)

    def on_interference(self, ctx, event) -> Plan | None:
        return self._forward("on_interference", ctx, event)

    def summary_extra(self) -> dict[str, Any]:
        info = dict(self.info)
        if "theta_t_s" in info and self._end_s is not None:
            # the budget is planned with profiled batch times; what the run took may differ (a
            # base scheduler's later plans, interference, throttling): say whether it held
            info["run_time_s"] = round(self._end_s, 6)
            info["within_budget"] = bool(self._end_s <= info["theta_t_s"] * (1 + 1e-9))
        if self.base is not None and "base_info" in info:
            # the base's report at the end of the run (rescales, splits, events as they happened)
            info["base_info"] = _base_summary(self.base)
        return info


def _base_summary(base) -> dict[str, Any]:
    with _as_base():
        return dict(base.summary_extra()) if hasattr(base, "summary_extra") else {}


@contextmanager
def _as_base():
    """The base scheduler's errors as a composed run's: its fields live under
    ``scheduler.options.base`` (the original stays the context, for SOCSIM_DEBUG's traceback)."""
    try:
        yield
    except InputError as e:
        raise type(e)(e.message, file=e.file, field=_rebase_field(e.field), value=e.value,
                      line=e.line) from None


def _rebase_field(field: str | None) -> str | None:
    """A field of the base scheduler's own run as it sits in a composed run's options."""
    if field == "scheduler.name":
        return "scheduler.options.base.name"
    if field is not None and field.startswith("scheduler.options"):
        return "scheduler.options.base.options" + field[len("scheduler.options"):]
    return field


def _runs(seq: tuple[str, ...]) -> list[list]:
    """Run-length encoding of a configuration sequence: [[config, batches], ...]."""
    out: list[list] = []
    for s in seq:
        if out and out[-1][0] == s:
            out[-1][1] += 1
        else:
            out.append([s, 1])
    return out
