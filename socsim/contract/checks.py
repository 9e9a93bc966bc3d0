"""Whether the engine can run a plan on a SoC: one check for the engine (every plan, from
``plan()``, a hook or ``ctx.continue_batch``), the registry (a plugin's ``plan()``) and
``socsim validate --soc``.  A bad plan is a ScheduleError naming the scheduler and the method
that returned it."""
from __future__ import annotations

import math
import numbers
from typing import Callable, cast

from socsim.contract.cores import check_freq_setting
from socsim.contract.plan import DSP_GRAPH_MODES, Plan, Step
from socsim.hw import units as hw_units
from socsim.errors import InputError, ScheduleError
from socsim.jsonio import strict_json_error
from socsim.spec.soc import SocSpec
from socsim.spec.workload import GOVERNORS
from socsim.workload.ops import Op

Fail = Callable[..., ScheduleError]


def check_plan(plan: Plan, soc: SocSpec, *, scheduler: str | None = None, hook: str | None = None,
               batch_size: int | None = None, input_shape: object = None) -> None:
    """A plan the engine can run on ``soc``, or a ScheduleError (the engine and ``socsim validate
    --soc``).  ``scheduler`` (the name it was selected by) and ``hook`` (the method that returned
    the plan, ``"plan()"``, ``"on_batch_end()"``, ...) go into the error: the scheduler as its
    value, the hook into the message.  A plan too big for the phone's DRAM names the input that
    makes it so: ``batch_size`` (or ``input``, ``input_shape``, at batch size 1)."""
    src = hook or "the scheduler"  # the error's value names the scheduler

    def fail(msg: str, field: str = "scheduler.name", value: object = None):
        return ScheduleError(msg, field=field, value=scheduler if value is None else value)

    if not isinstance(plan, Plan):
        verb = "was given" if src.startswith("ctx.continue_batch()") else "returned"
        raise fail(f"{src} {verb} {type(plan).__name__}, not a Plan")
    try:
        steps = tuple(plan.steps)
    except TypeError:
        raise fail(f"the plan from {src} has steps of type {type(plan.steps).__name__}, not a tuple of Step") from None
    if not steps:
        raise fail(f"the plan from {src} has no steps (a batch must run the training graph's ops)")
    for k, st in enumerate(steps):
        if not isinstance(st, Step):
            raise fail(f"the plan from {src}: step {k} is {type(st).__name__}, not a Step")
        if not isinstance(st.op, Op):
            raise fail(f"the plan from {src}: step {k} has op {st.op!r} ({type(st.op).__name__}), not an Op "
                       "of the training graph (ctx.graph().ops)")
        problem = _op_problem(st.op)
        if problem:
            raise fail(f"the plan from {src}: step {k} has op {getattr(st.op, 'name', '?')!r} with {problem} "
                       "(plan the training graph's ops, ctx.graph().ops, or copies of them)")
        if not isinstance(st.label, str):
            raise fail(f"the plan from {src}: step {k} ({st.op.name}) has label {st.label!r}; expected a string")
        if st.unit not in hw_units.names():
            raise fail(f"the plan from {src}: step {k} ({getattr(st.op, 'name', '?')}) is on unit {st.unit!r}; "
                       f"units are {', '.join(hw_units.names())}")
    units = {st.unit for st in steps}
    if "dsp" in units and soc.dsp is None:
        raise fail(f"the plan from {src} places ops on a DSP but {soc.name} has none")
    if "gpu" in units and soc.gpu is None:
        raise fail(f"the plan from {src} places ops on a GPU but {soc.name} has none")
    for k, st in enumerate(steps):
        if not hw_units.unit_runs(soc, st.op, st.unit):
            raise fail(f"the plan from {src}: step {k} places op {st.op.name} ({st.op.kind}, {st.op.dtype}) on the "
                       f"{st.unit} of {soc.name}, which cannot run it"
                       + (" (the DSP has no float unit: train in int8, e.g. precision: niti)"
                          if st.unit == "dsp" and st.op.dtype not in ("int8", "int32") else ""))
    if units & {"dsp", "hmx"} and plan.dsp_graph not in ("per_batch", "reuse"):
        raise fail(f"the plan from {src} places {plan.count('dsp') + plan.count('hmx')} ops on the DSP but has dsp_graph "
                   f"{plan.dsp_graph!r}; the DSP runs a prepared graph: 'per_batch' (prepared every batch) "
                   "or 'reuse' (prepared once, kept)")
    # the core set is the scheduler's choice (a workload's cpu.cores is checked when resolved)
    if "cpu" in units and not plan.cpu_cores:
        raise fail(f"the plan from {src} runs ops on the CPU but names no CPU cores")
    all_ids = {i for c in soc.cpu.clusters for i in c.core_ids}
    try:
        cores = list(plan.cpu_cores)
    except TypeError:
        raise fail(f"the plan from {src} has cpu_cores {plan.cpu_cores!r}, not a tuple of core ids") from None
    if any(isinstance(c, bool) or not isinstance(c, numbers.Integral) for c in cores):
        raise fail(f"the plan from {src} has cpu_cores {cores!r}; expected integer core ids")
    bad = [c for c in cores if c not in all_ids]
    if bad:
        raise fail(f"the plan from {src} has cpu_cores {cores}: {soc.name} has no core {', '.join(map(str, bad))} "
                   f"(its cores are {sorted(all_ids)})")
    if len(set(cores)) != len(cores):
        twice = sorted({c for c in cores if cores.count(c) > 1})
        raise fail(f"the plan from {src} names cores {twice} more than once; core ids must be distinct "
                   "(a core runs one training thread)")
    _check_plan_freqs(plan, soc, src, fail)
    _check_plan_memory(plan, soc, src, len(steps), fail, batch_size, input_shape)
    _check_plan_fields(plan, src, fail, batch_size)


# an op's counts and shape parameters as the cost models can take them: 64-bit, not negative
_OP_COUNTS = ("macs", "flops", "bytes_read", "bytes_written", "weight_bytes", "out_bytes", "saved_bytes")
_MAX_COUNT, _MAX_PARAM = 1 << 62, 1 << 40
_AT_LEAST_ONE = ("batch", "stride", "kh", "kw", "k", "cin", "cout", "c", "h", "w")


def _op_problem(op: Op) -> str | None:
    """What makes a plugin-built op uncostable (a NaN count, a zero stride), or None."""
    for name in _OP_COUNTS:
        v = getattr(op, name, None)
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or not 0 <= cast(float, v) < _MAX_COUNT:
            return f"{name} {v!r} (a count, 0 to 2^62)"
    try:
        params = dict(op.params)
    except (TypeError, ValueError):
        return f"params {op.params!r} (expected (name, int) pairs)"
    for name, v in params.items():
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 0 <= v < _MAX_PARAM:
            return f"params {name}={v!r} (an integer, 0 to 2^40)"
        if name in _AT_LEAST_ONE and v < 1:
            return f"params {name}={v!r} (at least 1)"
    return None


def _check_plan_fields(plan: Plan, src: str, fail: Fail, batch_size: int | None) -> None:
    """The plan's other fields: names the engine knows, non-negative finite overheads, a
    micro-batch split of the mini-batch, and a label and notes the summary can carry."""
    if plan.governor is not None and plan.governor not in GOVERNORS:
        raise fail(f"the plan from {src} has governor {plan.governor!r}; governors are {', '.join(GOVERNORS)} "
                   "(or None: the workload's cpu.governor)")
    if plan.dsp_graph not in DSP_GRAPH_MODES:
        raise fail(f"the plan from {src} has dsp_graph {plan.dsp_graph!r}; expected one of "
                   f"{', '.join(DSP_GRAPH_MODES)}")
    if not isinstance(plan.shared_buffers, bool):
        raise fail(f"the plan from {src} has shared_buffers {plan.shared_buffers!r}; expected True or False")

    def count(v) -> bool:
        return not isinstance(v, bool) and isinstance(v, numbers.Real) and math.isfinite(v) and cast(float, v) >= 0

    def seconds(v) -> bool:   # an overhead longer than a day is a unit slip, not a phone
        return count(v) and v <= 86400

    if not count(plan.dsp_graph_bytes):
        raise fail(f"the plan from {src} has dsp_graph_bytes {plan.dsp_graph_bytes!r}; expected a byte count")
    if not seconds(plan.cpu_graph_prep_s):
        raise fail(f"the plan from {src} has cpu_graph_prep_s {plan.cpu_graph_prep_s!r}; expected seconds "
                   "(finite, 0 to 86400)")
    try:
        overheads = [tuple(p) for p in plan.prep_overheads]
    except TypeError:
        overheads = None
    if overheads is None or any(len(p) != 2 for p in overheads):
        raise fail(f"the plan from {src} has prep_overheads {plan.prep_overheads!r}; expected (name, seconds) pairs")
    for name, sec in overheads:
        if not isinstance(name, str) or not seconds(sec):
            raise fail(f"the plan from {src} has prep_overheads entry ({name!r}, {sec!r}); expected a name and "
                       "seconds (finite, 0 to 86400)")
    try:
        mbs = list(plan.micro_batches)
    except TypeError:
        mbs = None
    if mbs is None or any(isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 1 for m in mbs):
        raise fail(f"the plan from {src} has micro_batches {plan.micro_batches!r}; expected positive sample counts")
    if mbs and batch_size is not None and sum(mbs) != batch_size:
        raise fail(f"the plan from {src} has micro_batches {mbs} ({sum(mbs)} samples); they must add up to the "
                   f"mini-batch, batch_size {batch_size}")
    if not isinstance(plan.label, str):
        raise fail(f"the plan from {src} has label {plan.label!r}; expected a string")
    if not isinstance(plan.notes, dict):
        raise fail(f"the plan from {src} has notes of type {type(plan.notes).__name__}; expected a dict")
    problem = strict_json_error(plan.notes)
    if problem is not None:
        raise fail(f"the plan from {src} has notes the summary cannot carry as JSON: {problem}")


GIB = 1 << 30


def _check_plan_memory(plan: Plan, soc: SocSpec, src: str, n_steps: int, fail: Fail,
                       batch_size: int | None = None, input_shape: object = None) -> None:
    """``peak_memory_bytes`` and ``step_memory`` (one entry per step) are byte counts, and the
    plan fits in the phone's DRAM (``dram.capacity_gb``, GiB as phone RAM is sold): a training
    batch whose memory the phone does not have is an impossible schedule, not a slow one."""
    peak = plan.peak_memory_bytes
    if isinstance(peak, bool) or not isinstance(peak, numbers.Real) or not math.isfinite(peak) or peak < 0:
        raise fail(f"the plan from {src} has peak_memory_bytes {peak!r}; expected a byte count")
    need, where = peak, "its peak"
    if plan.step_memory is not None:
        try:
            mem = list(plan.step_memory)
        except TypeError:
            mem = None
        if mem is None or len(mem) != n_steps:
            got = f"{len(mem)} entries" if mem is not None else type(plan.step_memory).__name__
            raise fail(f"the plan from {src} has step_memory of {got}; expected one byte count per step ({n_steps})")
        for k, m in enumerate(mem):
            if isinstance(m, bool) or not isinstance(m, numbers.Real) or not math.isfinite(m) or m < 0:
                raise fail(f"the plan from {src} has step_memory[{k}] {m!r}; expected a byte count")
        top = max(mem, default=0)
        if top > need:
            k = mem.index(top)
            name = getattr(plan.steps[k].op, "name", "?")
            need, where = top, f"step {k} ({name})"
    cap_gb = soc.dram.capacity_gb
    if need > cap_gb * GIB:
        # the workload's size is the cause (the plan's memory is the batch's): blame the input
        # that sets it, not the scheduler that planned it
        too_big = (f"the plan from {src} needs {need / GIB:.1f} GiB of memory at {where}, more than the "
                   f"{cap_gb:g} GiB DRAM of {soc.name}")
        if batch_size is not None and batch_size > 1:
            raise fail(f"{too_big}; use a smaller batch_size or input, or the sage scheduler with a memory "
                       "budget (environment.memory_budget_mb) to split the mini-batch",
                       field="batch_size", value=batch_size)
        if batch_size is not None:
            raise fail(f"{too_big} at batch_size 1: use a smaller input (or model)", field="input",
                       value=list(input_shape) if isinstance(input_shape, (list, tuple)) else "batch_size 1")
        raise fail(f"{too_big}; use a smaller batch_size, or the sage scheduler "
                   "with a memory budget (environment.memory_budget_mb) to split the mini-batch")


def _check_plan_freqs(plan: Plan, soc: SocSpec, src: str, fail: Fail) -> None:
    """``cpu_freq_mhz``: None, or (cluster, MHz) pairs naming the SoC's clusters once each, every
    MHz a number the cluster can run (between OPPs it is floored to one, as ``cpu.freq`` is)."""
    fixed = plan.cpu_freq_mhz
    if fixed is None:
        return
    names = [c.name for c in soc.cpu.clusters]
    try:
        pairs = [tuple(p) for p in fixed]
    except TypeError:
        pairs = None
    if pairs is None or any(len(p) != 2 for p in pairs):
        raise fail(f"the plan from {src} has cpu_freq_mhz {fixed!r}; expected (cluster, MHz) pairs")
    seen = set()
    for name, mhz in pairs:
        if name not in names:
            raise fail(f"the plan from {src} has cpu_freq_mhz for cluster {name!r}; "
                       f"{soc.name} has CPU clusters {', '.join(names)}")
        if name in seen:
            raise fail(f"the plan from {src} has cpu_freq_mhz for cluster {name!r} twice")
        seen.add(name)
        if isinstance(mhz, bool) or not isinstance(mhz, numbers.Real) or not math.isfinite(mhz):
            raise fail(f"the plan from {src} has cpu_freq_mhz {mhz!r} for cluster {name!r}; expected MHz")
        try:
            check_freq_setting(soc, {name: mhz}, field="cpu_freq_mhz")
        except InputError as e:
            raise fail(f"the plan from {src} has cpu_freq_mhz {mhz:g} for cluster {name!r}: {e.message}") from None
