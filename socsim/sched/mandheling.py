"""Mandheling: mixed-precision (NITI INT8) training offloaded to the Hexagon DSP (MobiCom '22).

Four techniques, each switchable for the ablation (docs/seeds.md 1):

1. CPU-DSP co-scheduling: per-op latencies profiled on the CPU (2 big cores) and the DSP, a
   FastRPC switch cost per boundary, and the DP of :func:`socsim.sched.dp.co_schedule` places
   every op.  Off: every op the DSP supports goes to the DSP (naive offload).
2. Self-adaptive rescaling: the dynamic rescale (reducemax + two-pass requant) runs only every
   P batches; between, a single-pass static requant reuses the last scale.  P follows the
   observed frequency of scale changes.  Off: every batch rescales dynamically.
3. Batch splitting: a DSP op whose latency per MAC at the batch is well above that at a smaller
   batch (DSP cache exhaustion, Hexagon NN batch padding) runs as micro-batches; split weight
   gradients are summed in int32 (the integer gradient accumulation).
4. Subgraph reuse: DSP subgraphs are prepared once and reused (``dsp_graph="reuse"``); under a
   DSP memory budget smaller than all of them, regions are evicted (the most recently used one
   that fits the need) and their re-preparation is charged every batch.  Off: the whole DSP
   graph is prepared every batch, as the TFLite/MNN DSP delegates do.

With subgraph reuse, the placement sees the re-preparation a plan will incur under the budget
(``reprepare_in_placement``): the published DP (docs/seeds.md 1, technique 1) prices only op
latencies and switches, and on the paper's phones the subgraphs fit, so there it is the same
plan; where they do not fit (sd888's 535 MB ResNet-18 graph against 512 MB) the batch time the
DP minimises includes the re-preparation, and a plan that keeps a few ops on the CPU so its
subgraphs fit may be faster.  Off (the default): the published DP alone.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from socsim.hw import fastrpc
from socsim.hw.host import host_speed
from socsim.contract import BaseScheduler, Plan, Step
from socsim.sched.dp import co_schedule, placement_time
from socsim.sched.profiling import governed_freqs, latencies, switch_costs
from socsim.workload.costs import OpFactory, elems, is_persistent
from socsim.workload.niti import static_rescale
from socsim.workload.niti_train import niti_scale_trace
from socsim.workload.opkinds import kinds_where
from socsim.workload.ops import Op

MB = 1 << 20
# ops that are batch-parallel on the DSP and can run as micro-batches; weight gradients then
# need their int32 partial sums added (Mandheling 3.5)
SPLIT_KINDS = kinds_where(is_mac=True)


class MandhelingOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    co_scheduling: bool = Field(True, description="CPU-DSP placement by the DP (off: naive offload)")
    adaptive_rescale: bool = Field(True, description="periodic dynamic rescale (off: every batch)")
    batch_splitting: bool = Field(True, description="split abnormal DSP ops into micro-batches")
    subgraph_reuse: bool = Field(True, description="reuse prepared DSP subgraphs across batches")
    cpu_cores: str | list[int] = Field("big2", description="cores of the CPU part (2 big cores by default)")
    dsp_memory_budget_mb: float | None = Field(None, gt=0, description="DSP memory for prepared subgraphs; default: the SoC's dsp.memory_budget_mb")
    reprepare_in_placement: bool = Field(False, description="the co-scheduling placement counts the DSP subgraph re-preparation its plan incurs "
                                         "under the DSP memory budget (off: the published DP, op latencies and switches only)")
    use_hmx: bool = Field(False, description="run INT8 convolutions and matrix products on the cDSP's HMX where the SoC has one "
                          "and it is faster than HVX (Mandheling's own system used HVX only: off by default)")
    # Defaults below, sources: docs/seeds.md 1 names K and the "well above" test but gives no
    # values.  rescale_window 8: assumption (enough rescaled batches to estimate a
    # change frequency of one per 10-60 batches without lagging the early phase; plausible
    # 4-32).  max_rescale_period 30: half the 60-batch upper end of pub:dynamic_rescale's
    # interval, i.e. rescale_period_factor's two samples per change at the slowest rate.
    # split_ratio 1.5: assumption; in pub:dsp_conv_latency_ms the per-MAC latency of batch 8
    # over batch 4 is 0.67x at 8x8 (normal), 2.4x at 16x16 and 11.8x at 32x32 (abnormal), so
    # any ratio from 1 to ~2.3 separates them.  All are options a workload can set.
    rescale_window: int = Field(8, ge=2, description="K: rescaled batches observed to estimate the change frequency")
    rescale_period_factor: float = Field(0.5, gt=0, description="period = factor / f (f: scale changes per batch); 0.5 samples twice per change")
    max_rescale_period: int = Field(30, ge=1, description="longest gap between dynamic rescales (batches)")
    scale_change_interval: tuple[int, int] = Field((10, 60), description="batches between scale changes once settled (pub:dynamic_rescale)")
    warmup_batches: int = Field(0, ge=0, description="early-training batches in which scales change every batch (0: the run starts settled)")
    scale_source: Literal["model", "niti-train"] = Field("model", description="scale changes from the seeded model (scale_change_interval, warmup_batches) or observed in a real NITI run on the emulated HVX kernels (socsim.workload.niti_train)")
    split_ratio: float = Field(1.5, gt=1, description="abnormal: DSP latency per MAC at the batch > ratio x at a smaller batch")
    min_micro_batch: int = Field(4, ge=1, description="smallest micro-batch tried (below 4 samples Hexagon NN leaves HVX idle: per-sample latency rises, pub:dsp_conv_latency_ms)")

    @field_validator("cpu_cores")
    @classmethod
    def _cpu_cores(cls, v: str | list[int]) -> str | list[int]:
        from socsim.contract.cores import core_set_error
        problem = core_set_error(v)  # the format; whether the SoC has the cores is checked at plan time
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("scale_change_interval")
    @classmethod
    def _interval(cls, v: tuple[int, int]) -> tuple[int, int]:
        lo, hi = v
        if not 1 <= lo <= hi <= 10**9:
            raise ValueError(f"scale_change_interval must be 1 <= low <= high <= 1e9, got {list(v)}")
        return v


@dataclass(frozen=True)
class _Item:
    """One op of the batch as the DP sees it: its CPU and DSP forms (the DSP form may be split
    into micro-batches plus int32 accumulation) and their latencies."""

    op: Op
    cpu_steps: tuple[Step, ...]
    dsp_steps: tuple[Step, ...]
    l_cpu: float
    l_dsp: float
    micro_batch: int = 0


class Mandheling(BaseScheduler):
    name = "mandheling"
    precision = "niti"
    description = "Mandheling: INT8 (NITI) training on the Hexagon DSP with CPU co-scheduling (MobiCom '22)"
    Options = MandhelingOptions

    def __init__(self, options: MandhelingOptions | None = None) -> None:
        super().__init__(options)
        self.info: dict[str, Any] = {}
        self._dyn: Plan | None = None
        self._static: Plan | None = None

    # ------------------------------------------------------------------ planning
    def plan(self, ctx) -> Plan:
        o = self.options
        if ctx.soc.dsp is None:
            from socsim.errors import ScheduleError
            raise ScheduleError(f"{ctx.soc.name} has no DSP; mandheling offloads to the Hexagon DSP",
                                field="scheduler.name", value=self.name)
        graph = ctx.graph(self.precision)
        cores = ctx.cores(o.cpu_cores, field="scheduler.options.cpu_cores")
        self._cores = cores
        splits = self._splits(ctx, graph) if o.batch_splitting else {}
        live = graph.live_bytes()
        mem_of = {op.name: int(live[i]) for i, op in enumerate(graph.ops)}
        budget_mb = o.dsp_memory_budget_mb or (ctx.soc.dsp.memory_budget_mb if ctx.soc.dsp else 0)
        self._static = None
        dyn_budget_mb = budget_mb
        if o.adaptive_rescale:
            # both plans' graphs stay prepared (the engine keeps every reused graph): the
            # static-rescale plan runs most batches and holds its graph (up to the whole budget);
            # the dynamic-rescale plan, every few batches, prepares its regions in what is left
            self._static = self._build(ctx, graph, static_rescale(graph), cores, splits, mem_of,
                                       budget_mb, "static")
            held = min(self._static.dsp_graph_bytes / MB, budget_mb)
            dyn_budget_mb = max(0.0, budget_mb - held)
        self._dyn = self._build(ctx, graph, list(graph.ops), cores, splits, mem_of, dyn_budget_mb, "dynamic")
        self._rescale_layers = list(dict.fromkeys(op.layer for op in graph.ops
                                                  if op.kind == "requant_dynamic"))
        self._init_rescale(ctx)
        self.info.update({
            "cpu_cores": list(cores),
            "techniques": {k: getattr(o, k) for k in ("co_scheduling", "adaptive_rescale",
                                                      "batch_splitting", "subgraph_reuse")},
            "split_ops": {name: {"micro_batch": b, "parts": graph.batch // b}
                          for name, (b, _) in sorted(splits.items())},
        })
        return self._dyn

    def _build(self, ctx, graph, ops: list[Op], cores, splits, mem_of, budget_mb: float, kind: str) -> Plan:
        """Place ``ops`` (one rescale variant of the batch) and wrap them as a Plan."""
        o = self.options
        # the switches' host code runs on the plan's host core, its first (socsim.engine.batch.host_core)
        sw = switch_costs(ctx, ops, host_speed=host_speed(ctx.soc, cores[0]))
        budget_bytes = int(budget_mb * MB)
        freq: str | float | dict = "max"
        seen: list = []
        # "frequency left to the OS DVFS": profile the CPU at the operating point the governor
        # settles at for this placement, iterating placement <-> frequency to a fixed point
        # (schedutil follows the busiest core, and the host core works through everything but
        # the DSP's own time, so it settles at the top OPP; a governor with its own setting
        # gives that).
        while True:
            items = self._items(ctx, graph, ops, cores, splits, freq)
            l_cpu = [it.l_cpu for it in items]
            l_dsp = [it.l_dsp for it in items]
            if o.co_scheduling:
                units = self._place(ctx, items, sw, budget_bytes)
            else:  # naive offload: whatever the DSP can run goes to the DSP
                units = tuple("dsp" if math.isfinite(d) else "cpu" for d in l_dsp)
            predicted = placement_time(units, l_cpu, l_dsp, sw, start="cpu")
            dsp_s = sum(t for t, u in zip(l_dsp, units) if u == "dsp")
            # the host core is busy through the CPU ops, the FastRPC copies and the graph
            # preparation; only the DSP's time is waiting (socsim.contract.dvfs.schedutil_util)
            active = predicted + self._prep_estimate(ctx, items, units) - dsp_s
            nxt = governed_freqs(ctx, cores, active, active)
            if nxt is None or nxt == freq or nxt in seen or len(seen) >= 6:
                break
            seen.append(freq)
            freq = nxt
        steps: list[Step] = []
        memory: list[int] = []
        for it, u in zip(items, units):
            part = it.dsp_steps if u == "dsp" else it.cpu_steps
            steps.extend(part)
            memory.extend([mem_of.get(it.op.name, int(graph.peak_memory_bytes))] * len(part))
        regions = dsp_regions(items, units)
        graph_bytes = sum(b for _, b in regions)
        prep: tuple[tuple[str, float], ...] = ()
        evicted: list[int] = []
        if o.subgraph_reuse and ctx.soc.fastrpc is not None and regions:
            # what the engine charges every batch this plan runs (Plan.prep_overheads)
            evicted, cost = reprepare_cost(ctx.soc.fastrpc, regions, budget_bytes)
            if evicted:
                prep = (("dsp-subgraph-reprepare", cost),)
        plan = Plan(
            steps=tuple(steps), cpu_cores=cores,
            dsp_graph=("reuse" if o.subgraph_reuse else "per_batch") if regions else "none",
            dsp_graph_bytes=graph_bytes, prep_overheads=prep,
            micro_batches=(graph.batch,), peak_memory_bytes=int(graph.peak_memory_bytes),
            step_memory=tuple(memory), label=f"mandheling {kind}-rescale",
        )
        switches = sum(1 for a, b in zip(units, units[1:]) if a != b) + (units[:1] == ("dsp",))
        self.info.setdefault("plans", {})[kind] = {
            "cpu_ops": plan.count("cpu"), "dsp_ops": plan.count("dsp"), "switches": switches,
            "dsp_regions": len(regions), "dsp_graph_mb": round(graph_bytes / MB, 2),
            "regions_reprepared_per_batch": len(evicted),
            "reprepare_s_per_batch": round(sum(d for _, d in prep), 6),
            "predicted_op_time_s": round(predicted, 6),
            "cpu_freq_profiled": dict(freq) if isinstance(freq, dict) else freq,
            "cpu_placed": sorted({it.op.kind for it, u in zip(items, units) if u == "cpu"}),
        }
        note = getattr(self, "_place_note", None) if o.co_scheduling else None
        if note is not None:   # the published DP's plan overflowed the budget: what the placement weighed
            self.info["plans"][kind]["reprepare_in_placement"] = note
        return plan

    def _prep_estimate(self, ctx, items, units) -> float:
        """Per-batch DSP graph preparation when subgraphs are not reused."""
        if self.options.subgraph_reuse or ctx.soc.fastrpc is None:
            return 0.0
        # the storage of each DSP region, as the engine charges it (region_storage_bytes)
        regions = dsp_regions(items, units)
        return fastrpc.graph_prep_s(ctx.soc.fastrpc, sum(n for n, _ in regions), sum(b for _, b in regions))

    def _place(self, ctx, items, sw, budget_bytes: int) -> tuple[str, ...]:
        """Mandheling's co-scheduling DP over ``items``.  With subgraph reuse and
        ``reprepare_in_placement``, a plan is priced as the engine will run it: the DP's op and
        switch time plus the re-preparation of the subgraphs it evicts under ``budget_bytes``
        (:func:`reprepare_cost`, the cost the plan's ``prep_overheads`` carry).  That cost depends
        on the whole partition into subgraphs, not on one op at a time, so the DP is rerun with
        each DSP op's own preparation (:func:`socsim.hw.fastrpc.graph_prep_s` of its steps and
        of the weights and output it holds) added to its DSP latency, scaled by ``PREP_WEIGHTS``
        (a Lagrangian sweep: heavier weights keep more ops on the CPU and shrink the subgraphs),
        and the cheapest plan is kept.  The published DP's plan is kept when its subgraphs fit."""
        o = self.options
        rpc = ctx.soc.fastrpc
        l_cpu = [it.l_cpu for it in items]
        l_dsp = [it.l_dsp for it in items]
        units = co_schedule(l_cpu, l_dsp, sw, start="cpu").units
        self._place_note = None
        if not (o.subgraph_reuse and o.reprepare_in_placement and rpc is not None):
            return units
        _, reprep = reprepare_cost(rpc, dsp_regions(items, units), budget_bytes)
        if reprep == 0.0:
            return units
        best, best_cost = units, placement_time(units, l_cpu, l_dsp, sw, start="cpu") + reprep
        own = [fastrpc.graph_prep_s(rpc, len(it.dsp_steps), int(it.op.weight_bytes) + int(it.op.out_bytes))
               for it in items]
        tried = {units}
        for w in PREP_WEIGHTS:
            cand = co_schedule(l_cpu, [d + w * c for d, c in zip(l_dsp, own)], sw, start="cpu").units
            if cand in tried:
                continue
            tried.add(cand)
            cost = (placement_time(cand, l_cpu, l_dsp, sw, start="cpu")
                    + reprepare_cost(rpc, dsp_regions(items, cand), budget_bytes)[1])
            if cost < best_cost:
                best, best_cost = cand, cost
        self._place_note = {"published_dp_cost_s": round(placement_time(units, l_cpu, l_dsp, sw, start="cpu") + reprep, 6),
                            "chosen_cost_s": round(best_cost, 6), "candidates": len(tried)}
        return best

    def _items(self, ctx, graph, ops: list[Op], cores, splits, freq) -> list[_Item]:
        l_cpu = latencies(ctx, ops, "cpu", cores, freq)
        l_dsp = latencies(ctx, ops, "dsp")
        hmx = self.options.use_hmx and ctx.soc.dsp is not None and ctx.soc.dsp.hmx is not None
        l_hmx = latencies(ctx, ops, "hmx") if hmx else [math.inf] * len(ops)
        items = []
        for op, lc, ld, lh in zip(ops, l_cpu, l_dsp, l_hmx):
            cpu_steps = (Step(op, "cpu"),)
            if lh < ld and lh <= splits.get(op.name, (0, math.inf))[1]:   # the cDSP's matrix unit
                items.append(_Item(op, cpu_steps, (Step(op, "hmx"),), lc, lh))
            elif op.name in splits and math.isfinite(ld):
                b, t = splits[op.name]
                items.append(_Item(op, cpu_steps, self._split_steps(graph, op, b), lc, t, b))
            else:
                items.append(_Item(op, cpu_steps, (Step(op, "dsp"),), lc, ld))
        return items

    # ------------------------------------------------------------------ batch splitting
    def _splits(self, ctx, graph) -> dict[str, tuple[int, float]]:
        """Abnormal DSP ops -> (micro-batch, DSP time of the split op incl. accumulation)."""
        o = self.options
        batch = graph.batch
        sizes = [b for b in (batch >> k for k in range(1, 12)) if b >= o.min_micro_batch
                 and b >= 1 and batch % b == 0 and not _padded(ctx, b)]
        out: dict[str, tuple[int, float]] = {}
        for i, op in enumerate(graph.ops):
            if op.kind not in SPLIT_KINDS or not op.macs:
                continue
            t_full = ctx.profile(op, "dsp")
            if not math.isfinite(t_full):
                continue
            best: tuple[float, int] | None = None
            for b in sizes:
                small = graph.with_batch(b).ops[i]
                t_small = ctx.profile(small, "dsp")
                if not math.isfinite(t_small) or small.macs == 0:
                    continue
                # abnormal: latency per MAC at the full batch well above that at b
                if (t_full / op.macs) <= o.split_ratio * (t_small / small.macs):
                    continue
                total = (batch // b) * t_small + sum(ctx.profile(a, "dsp") for a in
                                                     self._accumulate(op, b, batch // b))
                if total < t_full and (best is None or total < best[0]):
                    best = (total, b)
            if best is not None:
                out[op.name] = (best[1], best[0])
        return out

    def _split_steps(self, graph, op: Op, b: int) -> tuple[Step, ...]:
        small = graph.with_batch(b).ops[graph.index[op.name]]
        parts = graph.batch // b
        steps = [Step(small, "dsp", f"{op.name}[{k + 1}/{parts}]") for k in range(parts)]
        steps += [Step(a, "dsp") for a in self._accumulate(op, b, parts)]
        return tuple(steps)

    @staticmethod
    def _accumulate(op: Op, b: int, parts: int) -> list[Op]:
        """Integer gradient accumulation of a split weight gradient: the int32 partial sums of
        the micro-batches are added (gradient scales S_i equal S in the usual case, so no
        rescale is needed; docs/seeds.md 1, technique 3)."""
        if op.phase != "weight_grad" or parts < 2:
            return []
        n = elems(op, "write")
        fac = OpFactory(op.layer, b)
        return [fac.op(f"{op.name}.accumulate", "add", "weight_grad", dict(batch=1, n=n),
                       read=2 * n, write=n, flops=n, dtype="int32")] * (parts - 1)

    # ------------------------------------------------------------------ self-adaptive rescaling
    def _init_rescale(self, ctx) -> None:
        o = self.options
        self._rng = np.random.default_rng([ctx.workload.seed, 0x4D414E44])  # "MAND"
        lo, hi = o.scale_change_interval
        self._version = 0                    # how many times the scales have changed
        self._next_change = o.warmup_batches + int(self._rng.integers(1, hi + 1))
        self._seen = -1                      # version observed at the last dynamic batch
        self._last_dyn = -10**9
        self._period = 1
        self._obs: list[tuple[int, bool]] = []
        self._dynamic_batches = 0
        self._stale_batches = 0
        self._periods: list[int] = []
        self._seed = int(ctx.workload.seed)
        self._trace: np.ndarray | None = None
        self._changed_batches: list[int] = []   # batches whose scales changed (niti-train)
        self._batches_seen = 0
        if o.scale_source == "niti-train":
            self._trace = niti_scale_trace(max(2, int(getattr(ctx.workload, "batches", 64) or 64)), self._seed)

    def _advance_traced(self, batch: int) -> None:
        """Scale changes observed in a real NITI run (:mod:`socsim.workload.niti_train`): the
        workload's rescale layers map cyclically onto the trained net's layers; the scales
        changed at ``batch`` when any mapped layer's shift differs from the batch before."""
        if batch >= len(self._trace):   # a longer run's trace extends a shorter one's
            self._trace = niti_scale_trace(1 << (batch + 1).bit_length(), self._seed)
        self._batches_seen = max(self._batches_seen, batch + 1)
        if batch == 0:
            return
        n = len(getattr(self, "_rescale_layers", ())) or self._trace.shape[1]
        cols = sorted({j % self._trace.shape[1] for j in range(n)})
        if np.any(self._trace[batch, cols] != self._trace[batch - 1, cols]):
            self._version += 1
            self._changed_batches.append(batch)

    def _advance_scales(self, batch: int) -> None:
        """Seeded model of NITI's scale factors (Mandheling 3.4): during warm-up they change
        every batch; once settled, every 10-60 batches (oscillating between two values)."""
        o = self.options
        lo, hi = o.scale_change_interval
        if batch < o.warmup_batches:
            self._version += 1
            return
        while batch >= self._next_change:
            self._version += 1
            self._next_change += int(self._rng.integers(lo, hi + 1))

    def on_batch_start(self, ctx, batch: int) -> Plan | None:
        if self._static is None:
            self._dynamic_batches += 1
            return self._dyn
        o = self.options
        if self._trace is not None:
            self._advance_traced(batch)
        else:
            self._advance_scales(batch)
        if batch - self._last_dyn < self._period:
            if self._version != self._seen:
                self._stale_batches += 1
            return self._static
        changed = self._seen >= 0 and self._version != self._seen
        self._seen = self._version
        self._last_dyn = batch
        self._dynamic_batches += 1
        self._obs = (self._obs + [(batch, changed)])[-o.rescale_window:]
        if len(self._obs) >= 2:
            span = self._obs[-1][0] - self._obs[0][0]
            changes = sum(1 for _, c in self._obs[1:] if c)
            if changes == 0:   # no change seen: back off
                self._period = min(o.max_rescale_period, 2 * self._period)
            else:              # f = changes per batch; rescale period = factor / f
                self._period = int(min(o.max_rescale_period,
                                       max(1, math.floor(o.rescale_period_factor * span / changes))))
        self._periods.append(self._period)
        return self._dyn

    def summary_extra(self) -> dict[str, Any]:
        out = dict(self.info)
        out["rescale"] = {
            "adaptive": self._static is not None,
            "dynamic_batches": self._dynamic_batches,
            "stale_batches": self._stale_batches,
            "scale_changes": getattr(self, "_version", 0),
            "periods": self._periods[-50:],
            "scale_source": self.options.scale_source,
        }
        if self._trace is not None:
            n = self._batches_seen
            half = n // 2
            early = sum(1 for b in self._changed_batches if b < half)
            out["rescale"]["observed_change_rate"] = {   # scale changes per batch
                "all": round(len(self._changed_batches) / max(1, n - 1), 4),
                "first_half": round(early / max(1, half - 1), 4),
                "second_half": round((len(self._changed_batches) - early) / max(1, n - half), 4),
            }
        return out


def _padded(ctx, b: int) -> bool:
    """Would Hexagon NN pad a micro-batch of ``b`` up to a larger batch (batches above 4 go to a
    multiple of ``dsp.batch_pad_to``, pub:dsp_conv_latency_ms)?  Such a micro-batch costs as
    much as the padded one, so profiling it is skipped."""
    from socsim.hw.dsp import padded_batch

    dsp = ctx.soc.dsp
    return dsp is not None and padded_batch(b, dsp.batch_pad_to, ctx.workload.dsp.batch_padding) != b


def region_storage_bytes(ops: Sequence[Op], start: int, end: int) -> int:
    """DSP memory a prepared subgraph of ``ops[start:end]`` holds: its weights (Hexagon NN keeps
    a graph's constants for the graph's life) plus the peak of its live tensors.  Hexagon NN's
    prepare allocates a graph's tensors by liveness, not one buffer each: it inserts a free after
    each tensor's last consumer and places the tensors first-fit in one bulk allocation sized to
    the high-water mark (XiaoMi/nnlib ``hexagon/src/allocate.c``, ``allocate_graph_storage``;
    fragmentation not modelled).  A tensor lives from its producer (a region input: from the
    region's start) to its last reader in the region, or to the region's end if ops after the
    region read it (it leaves as an output).  Parameter updates write in place (no tensor)."""
    last_use: dict[str, int] = {}
    index: dict[str, int] = {}
    for i, op in enumerate(ops):
        index[op.name] = i
        for t in op.inputs:
            last_use[t] = i

    def size(j: int) -> int:
        return 0 if is_persistent(ops[j]) else ops[j].out_bytes

    live: dict[str, int] = {}
    ends: dict[str, int] = {}
    for i in range(start, end):
        for t in ops[i].inputs:
            j = index.get(t)
            if j is not None and j < start and t not in live:   # a region input
                live[t] = size(j)
                ends[t] = min(last_use[t], end - 1)
    peak = sum(live.values())
    for i in range(start, end):
        live[ops[i].name] = size(i)
        ends[ops[i].name] = min(max(last_use.get(ops[i].name, i), i), end - 1)
        peak = max(peak, sum(live.values()))
        for t in [t for t, e in ends.items() if e <= i]:
            del live[t], ends[t]
    return int(peak + sum(op.weight_bytes for op in ops[start:end]))


# Weights of each DSP op's own preparation cost added to its DSP latency in the placement's
# sweep (Mandheling._place): 1 prices an op as if its subgraph were prepared every batch; below
# 1, as if a fraction of the subgraphs were; above 1 pushes harder towards the CPU.  A search
# grid, not a model constant: every candidate is priced exactly (reprepare_cost) and the
# cheapest kept; the published DP's plan (weight 0) is always a candidate.
PREP_WEIGHTS = tuple(2.0 ** k for k in range(-6, 4))


def dsp_regions(items: Sequence[Any], units: Sequence[str]) -> list[tuple[int, int]]:
    """(DSP steps, prepared bytes) of each maximal run of DSP-placed items: the subgraphs a
    placement prepares on the DSP (``items``: objects with ``op`` and ``dsp_steps``)."""
    ops = [it.op for it in items]
    out: list[tuple[int, int]] = []
    start: int | None = None
    n = 0
    for i, u in enumerate(list(units) + ["cpu"]):
        if u == "dsp":
            if start is None:
                start, n = i, 0
            n += len(items[i].dsp_steps)
        elif start is not None:
            out.append((n, region_storage_bytes(ops, start, i)))
            start = None
    return out


def reprepare_cost(rpc, regions: Sequence[tuple[int, int]], budget_bytes: int) -> tuple[list[int], float]:
    """The subgraphs of ``regions`` ((DSP steps, bytes) each) prepared again every steady-state
    batch under ``budget_bytes`` (:func:`reprepared_regions`) and the seconds that takes
    (:func:`socsim.hw.fastrpc.graph_prep_s`).  The plan carries this as its per-batch
    ``prep_overheads`` for the engine to charge, and the placement prices candidates with it."""
    evicted = reprepared_regions([b for _, b in regions], budget_bytes) if regions else []
    return evicted, sum(fastrpc.graph_prep_s(rpc, regions[r][0], regions[r][1]) for r in evicted)


def reprepared_regions(sizes: list[int], budget_bytes: int, batches: int = 4) -> list[int]:
    """DSP regions prepared anew in a steady-state batch when prepared regions must fit
    ``budget_bytes`` (Mandheling 3.6).  Regions run in order every batch; when a region must be
    prepared and memory is short, the most recently used prepared region among those big
    enough to cover the shortfall is released (in a cyclic execution order it has the longest
    reuse distance); if none is big enough, the most recently used one is released and the
    search repeats.  A region larger than the whole budget is prepared and released each time.
    Returns the indices re-prepared in the last of ``batches`` simulated batches."""
    prepared: dict[int, int] = {}   # region -> last use (a clock)
    free = budget_bytes
    clock = 0
    misses: list[int] = []
    for _ in range(batches):
        misses = []
        for r, size in enumerate(sizes):
            clock += 1
            if r in prepared:
                prepared[r] = clock
                continue
            misses.append(r)
            if size > budget_bytes:
                continue
            while size > free:
                need = size - free
                fits = [q for q in prepared if sizes[q] >= need]
                pool = fits or list(prepared)
                victim = max(pool, key=lambda q: prepared[q])
                free += sizes[victim]
                del prepared[victim]
            prepared[r] = clock
            free -= size
    return misses
