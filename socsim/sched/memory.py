"""Memory planning for training under a memory budget: Sage's dynamic gradient checkpointing
(DGC) and accumulation (DGA) and the static baselines, as pure functions of a kernel list.

:func:`simulate` plays a batch's kernels in execution order against a memory budget the way a
runtime allocator with rematerialisation does (Sage 3.4.1, after DTR, Kirisame et al. ICLR '21):

* a tensor is allocated when its kernel runs and freed after its last reader; parameters,
  gradients and anything else resident (``base_bytes``) are held throughout;
* before a kernel runs, the inputs that were evicted are recomputed on demand: their producers,
  and the producers of those producers' inputs that are gone too, re-run once each in execution
  order (a checkpointed segment's forward pass); a recomputed tensor stays resident for its later
  readers like any other, and one recomputed only to recompute others goes after its last reader
  in the re-run;
* when the kernel's new outputs would exceed the budget, the resident forward activation with
  the lowest recompute latency / size that the kernel does not read is evicted (DGC: "keep
  everything until the budget is hit");
* ``evict_after_forward`` forces eviction of the named tensors once their forward readers are
  done, and ``keep`` holds checkpoints to the end of the batch (static checkpointing).

With no budget and nothing forced it is plain liveness analysis (the same figures as
:func:`socsim.workload.memory.live_bytes` for an unfused graph).  Kernels may materialise
several tensors (fused kernels keep their members' tensor names).
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass, replace
from typing import Callable, Sequence

from socsim.workload.costs import is_persistent
from socsim.workload.memory import INPUT
from socsim.workload.ops import Op

Outputs = Sequence[Sequence[tuple[str, int]]]


# A thrash guard, not from Sage (docs/seeds.md 2 gives no limit); assumption: a schedule that needs
# more than 8x the batch's kernels in recomputation is treated as infeasible.
MAX_RECOMPUTE_FACTOR = 8


@dataclass(frozen=True)
class Schedule:
    """A batch's kernels as run under a budget, with the memory in use while each runs."""

    kernels: tuple[Op, ...]
    memory: tuple[int, ...]
    recomputes: int = 0
    evictions: int = 0

    @property
    def peak(self) -> int:
        return max(self.memory) if self.memory else 0


class Infeasible(Exception):
    """Nothing left to evict and the kernel still does not fit the budget."""


def default_outputs(ops: Sequence[Op]) -> list[tuple[tuple[str, int], ...]]:
    return [((op.name, 0 if is_persistent(op) else op.out_bytes),) for op in ops]


def simulate(kernels: Sequence[Op], input_bytes: int, base_bytes: int, *,
             outputs: Outputs | None = None, budget_bytes: int | None = None,
             evict_after_forward: frozenset[str] = frozenset(), keep: frozenset[str] = frozenset(),
             latency_s: Callable[[Op], float] | None = None,
             max_recompute_factor: int = MAX_RECOMPUTE_FACTOR, budget_changes: Sequence[tuple[int, int]] = (),
             stop_after: int | None = None, best_effort: bool = False) -> Schedule:
    """Run ``kernels`` against ``budget_bytes`` (None: unlimited).  Raises :class:`Infeasible`
    if a kernel cannot fit even with every evictable tensor evicted, or if recomputation
    thrashes (more than ``max_recompute_factor`` times the kernels of the batch).

    ``budget_changes``: ``(k, bytes)`` pairs, k ascending: the budget becomes ``bytes`` from
    kernel ``k`` of the run on (0-based, in the order run, recomputations included).  The
    schedule before ``k`` is the one without the change; as kernel ``k`` is materialised, the
    tensors it does not read are evicted as far as the new budget needs (a budget that drops
    while kernel ``k`` runs: Sage evicts at once, and ``memory[k]`` is what is left).
    ``stop_after``: end the run once kernel ``stop_after`` has run; ``best_effort``: where
    nothing is left to evict, go on over the budget instead of raising (with a budget of 0
    from kernel ``k``, ``memory[k]`` is then what the run must hold there: the tensors kernel
    ``k`` reads and writes, and whatever is not evictable)."""
    outputs = default_outputs(kernels) if outputs is None else outputs
    first_budget = math.inf if budget_bytes is None else budget_bytes
    changes = sorted(budget_changes)
    latency = latency_s or (lambda op: float(op.macs + op.flops + op.bytes_read + op.bytes_written))
    producer: dict[str, int] = {}
    size: dict[str, int] = {INPUT: input_bytes}
    for i, outs in enumerate(outputs):
        for name, b in outs:
            producer[name] = i
            size[name] = b
    remaining: dict[str, int] = {}
    fwd_remaining: dict[str, int] = {}
    for k in kernels:
        for t in set(k.inputs):
            remaining[t] = remaining.get(t, 0) + 1
            if k.phase == "forward":
                fwd_remaining[t] = fwd_remaining.get(t, 0) + 1
    for t in keep:  # checkpoints stay resident to the end of the batch
        remaining[t] = remaining.get(t, 0) + 1
    resident: dict[str, int] = {INPUT: input_bytes} if INPUT in remaining else {}
    st = {"mem": base_bytes + sum(resident.values()), "rc": 0, "ev": 0}
    out_k: list[Op] = []
    out_m: list[int] = []
    lat_memo: dict[int, float] = {}
    limit = max_recompute_factor * max(len(kernels), 1)

    def evictable(t: str) -> bool:
        i = producer.get(t)
        return i is not None and kernels[i].phase == "forward" and size[t] > 0

    def h(t: str) -> float:
        i = producer[t]
        c = lat_memo.get(i)
        if c is None:
            c = lat_memo[i] = latency(kernels[i])
        for x in kernels[i].inputs:  # inputs gone too must be recomputed first
            j = producer.get(x)
            if j is not None and x not in resident:
                c += lat_memo.setdefault(j, latency(kernels[j]))
        return c / size[t]

    def free(t: str) -> None:
        b = resident.pop(t, None)
        if b is not None:
            st["mem"] -= b

    def make_room(need: int, pinned: set[str]) -> None:
        budget = first_budget
        for at, b in changes:
            if len(out_k) >= at:
                budget = b
        while st["mem"] + need > budget:
            cands = [t for t in resident if t not in pinned and evictable(t)]
            if not cands:
                if best_effort:
                    return
                raise Infeasible(f"a kernel needs {(st['mem'] + need) / 2**20:.0f} MiB with nothing left to evict")
            victim = min(cands, key=h)
            free(victim)
            st["ev"] += 1

    def materialise(i: int, k: Op, pinned: set[str]) -> None:
        need = sum(b for name, b in outputs[i] if name not in resident)
        make_room(need, pinned | set(k.inputs))
        for name, b in outputs[i]:
            if name not in resident:
                resident[name] = b
                st["mem"] += b
        out_k.append(k)
        out_m.append(st["mem"])

    def recompute(ts: Sequence[str], pinned: set[str]) -> None:
        """Bring the evicted tensors ``ts`` back: re-run, in execution order, the kernels that
        produce them and whatever of their inputs is gone too (a checkpointed segment's forward
        pass), freeing each intermediate after its last reader in the re-run when nothing later
        in the batch reads it, as a reference-counting runtime does.  ``ts`` stay resident for
        the kernel that asked for them."""
        run: set[int] = set()
        stack = [t for t in ts if t not in resident and t in producer]
        seen: set[str] = set()
        while stack:
            x = stack.pop()
            if x in seen or x in resident or x not in producer:
                continue
            seen.add(x)
            run.add(producer[x])
            stack.extend(kernels[producer[x]].inputs)
        readers: dict[str, int] = {}
        for j in run:
            for x in set(kernels[j].inputs):
                readers[x] = readers.get(x, 0) + 1
        hold = pinned | set(ts)
        for j in sorted(run):
            k = kernels[j]
            st["rc"] += 1
            if st["rc"] > limit:
                raise Infeasible("recomputation thrashes at this budget")
            inner = hold | set(k.inputs)
            gone = [x for x in k.inputs if x not in resident and x in producer]
            if gone:  # evicted again by this re-run's own allocations (under a budget)
                recompute(gone, inner)
            materialise(j, replace(k, name=f"{k.name}@rc", phase="error_grad",
                                   attrs=tuple(sorted(dict(k.attrs, recompute_of=k.name).items()))), inner)
            for x in set(k.inputs):
                readers[x] -= 1
            for x in [*set(k.inputs), *(name for name, _ in outputs[j])]:
                if readers.get(x, 0) == 0 and remaining.get(x, 0) == 0 and x not in hold:
                    free(x)

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20 * len(kernels) + 1000))
    try:
        for i, k in enumerate(kernels):
            pinned = set(k.inputs)
            recompute(k.inputs, pinned)
            materialise(i, k, pinned)
            if stop_after is not None and len(out_k) > stop_after:
                break
            for t in set(k.inputs):
                remaining[t] -= 1
                if k.phase == "forward":
                    fwd_remaining[t] -= 1
                    if fwd_remaining[t] == 0 and t in evict_after_forward:
                        free(t)
                if remaining[t] == 0:
                    free(t)
            for name, _ in outputs[i]:
                if remaining.get(name, 0) == 0:
                    free(name)
                elif name in evict_after_forward and fwd_remaining.get(name, 0) == 0:
                    free(name)
    finally:
        sys.setrecursionlimit(old)
    return Schedule(tuple(out_k), tuple(int(m) for m in out_m), st["rc"], st["ev"])


def saved_tensors(kernels: Sequence[Op], outputs: Outputs | None = None) -> list[str]:
    """Forward tensors the backward pass reads (what training stores across the gap), in
    forward order."""
    outputs = default_outputs(kernels) if outputs is None else outputs
    read = {t for k in kernels if k.phase != "forward" for t in k.inputs}
    return [name for k, outs in zip(kernels, outputs) if k.phase == "forward"
            for name, b in outs if b > 0 and name in read]


def static_checkpoints(kernels: Sequence[Op], outputs: Outputs | None = None) -> tuple[frozenset[str], frozenset[str]]:
    """The classic sqrt(n) schedule (Chen et al. 2016, "Training deep nets with sublinear memory
    cost"; Sage's static-checkpointing baseline).  Checkpoints are articulation tensors (the only
    forward tensor a later forward op still needs, e.g. a residual block's output), one after
    every ceil(sqrt(n)) stored tensors, so that recomputing any evicted tensor needs only its
    segment.  Returns (tensors to evict after the forward pass, checkpoints to keep)."""
    outputs = default_outputs(kernels) if outputs is None else outputs
    saved = saved_tensors(kernels, outputs)
    saved_set = set(saved)
    step = max(1, math.ceil(math.sqrt(len(saved))))
    fwd_rem: dict[str, int] = {}
    for k in kernels:
        if k.phase == "forward":
            for t in set(k.inputs):
                fwd_rem[t] = fwd_rem.get(t, 0) + 1
    live: set[str] = set()
    keep: set[str] = set()
    since = 0
    for k, outs in zip(kernels, outputs):
        if k.phase != "forward":
            continue
        for t in set(k.inputs):
            fwd_rem[t] -= 1
            if fwd_rem[t] == 0:
                live.discard(t)
        for name, b in outs:
            since += name in saved_set
            if fwd_rem.get(name, 0) > 0 and b > 0:
                live.add(name)
        if since >= step and len(live) == 1:
            keep |= live
            since = 0
    return frozenset(t for t in saved if t not in keep), frozenset(keep)


def greedy_split(batch: int, micro: int) -> tuple[int, ...]:
    """Micro-batches as large as fit: ``micro`` repeated, then the remainder (32, 20 -> 20+12)."""
    micro = max(1, min(micro, batch))
    return (micro,) * (batch // micro) + ((batch % micro,) if batch % micro else ())
