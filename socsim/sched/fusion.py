"""Sage's graph optimisations of the unified forward+backward training graph (docs/seeds.md section 2).

Two passes over an op list in execution order, both pure functions of the ops:

* :func:`reduce_subgraphs` (subgraph reduction): a cheap element-wise node whose output is read
  both by forward consumers and by the backward pass is not stored across the forward/backward
  gap; the backward pass recomputes it from tensors that are stored anyway.  The recomputed
  chain is bounded as in Sage: fewer than ``kw`` distinct (variadic) inputs and fewer than ``kh``
  chained (monadic) nodes.  Batch norm counts as element-wise here because, given its saved
  per-channel statistics, applying it is a scale and shift per element (Sage lowers BN to
  reductions + element-wise ops; only the element-wise part is recomputed).
* :func:`fuse` (operator fusion): consecutive ops joined by a producer->consumer edge become one
  kernel when at most one of them is asymmetrical (convolution, matrix product, reduction, pool,
  norm); symmetrical (element-wise / injective) ops fuse with each other and with one
  asymmetrical op; opaque ops (gather/scatter, sort, argmax) never fuse, nor does a weight update
  with the gradient ops before it (it must run once per mini-batch).  A member's output that
  an op outside the kernel reads later stays materialised; the others never reach memory, which
  removes their write, their re-read and their allocation, and one kernel launch per member.

Each op kind declares its class and whether it is recomputable in socsim.workload.opkinds
(``fusion``, ``recompute``); an unknown kind is an error.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from socsim.workload.costs import is_persistent
from socsim.workload.memory import INPUT, mark_saved
from socsim.workload.opkinds import lookup
from socsim.workload.ops import Op

#: operations per element when recomputing BN from its saved statistics: (x - mean) * inv_std,
#: then gamma * . + beta
BN_APPLY_FLOPS_PER_ELEM = 4


def op_class(op: Op) -> str:
    """'sym', 'asym' or 'opaque' (Sage's three classes of operators: the kind's ``fusion``)."""
    return lookup(op.kind).fusion


def _recomputable(op: Op) -> bool:
    """Element-wise for subgraph reduction: symmetrical ops, and BN applied with its saved
    statistics (scale + shift): the kind's ``recompute``."""
    return lookup(op.kind).recompute != ""


# ------------------------------------------------------------------------- subgraph reduction
@dataclass(frozen=True)
class ReductionStats:
    reduced: int = 0            # tensors no longer stored across the forward/backward gap
    bytes_not_stored: int = 0   # their total size
    recompute_flops: int = 0


def _recompute_flops(op: Op) -> int:
    if lookup(op.kind).recompute == "apply":
        return BN_APPLY_FLOPS_PER_ELEM * op.out_bytes // 4
    return op.flops


def reduce_subgraphs(ops: tuple[Op, ...], kw: int = 5, kh: int = 5) -> tuple[tuple[Op, ...], ReductionStats]:
    """Replace stored multi-consumer element-wise tensors by backward-time recomputation.

    Returns the new op list (each reduced tensor ``T`` gets a recompute op ``T@sr`` right before
    its first backward reader, which reads it instead of ``T``) and what changed.
    """
    index = {op.name: i for i, op in enumerate(ops)}
    fwd_readers: dict[str, int] = {}
    bwd_readers: dict[str, list[int]] = {}
    for j, op in enumerate(ops):
        for t in op.inputs:
            if op.phase == "forward":
                fwd_readers[t] = fwd_readers.get(t, 0) + 1
            else:
                bwd_readers.setdefault(t, []).append(j)
    stored = {t for t in bwd_readers if t == INPUT or (t in index and ops[index[t]].phase == "forward")}

    def chain(t: str, depth: int, leaves: set[str], nodes: list[str]) -> bool:
        """Can tensor ``t`` be rebuilt from stored tensors within the Kw/Kh bounds?"""
        if t in stored or t == INPUT:
            leaves.add(t)
            return len(leaves) < kw
        i = index.get(t)
        if i is None or depth >= kh:
            return False
        op = ops[i]
        if op.phase != "forward" or not _recomputable(op) or is_persistent(op):
            return False
        for s in op.inputs:
            if not chain(s, depth + 1, leaves, nodes):
                return False
        if t not in nodes:
            nodes.append(t)
        return True

    plans: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for op in ops:
        if op.phase != "forward" or op.name not in stored or not _recomputable(op):
            continue
        if fwd_readers.get(op.name, 0) == 0 or is_persistent(op):
            continue  # single (backward-only) consumer: nothing to gain
        stored.discard(op.name)
        leaves: set[str] = set()
        nodes: list[str] = []
        ok = all(chain(s, 1, leaves, nodes) for s in op.inputs) and len(nodes) + 1 < kh + 1
        if ok:
            plans[op.name] = (tuple(sorted(leaves)), tuple(nodes))
        else:
            stored.add(op.name)
    if not plans:
        return ops, ReductionStats()

    size = {op.name: op.out_bytes for op in ops}
    first_bwd = {t: min(bwd_readers[t]) for t in plans}
    insert_at: dict[int, list[Op]] = {}
    nbytes = flops_total = 0
    for t, (leaves, nodes) in plans.items():
        src = ops[index[t]]
        flops = _recompute_flops(src) + sum(_recompute_flops(ops[index[n]]) for n in nodes)
        read = sum(size.get(s, 0) for s in leaves if s != INPUT)
        rc = replace(src, name=f"{t}@sr", phase="error_grad", inputs=leaves, flops=flops,
                     bytes_read=read, saved_bytes=0,
                     params=src.params + (("recompute", 1),),
                     attrs=tuple(sorted(dict(src.attrs, recompute_of=t).items())))
        insert_at.setdefault(first_bwd[t], []).append(rc)
        nbytes += src.out_bytes
        flops_total += flops
    out: list[Op] = []
    for j, op in enumerate(ops):
        out.extend(insert_at.get(j, ()))
        if op.phase != "forward" and any(t in plans for t in op.inputs):
            op = replace(op, inputs=tuple(f"{t}@sr" if t in plans else t for t in op.inputs))
        out.append(op)
    return mark_saved(out), ReductionStats(len(plans), nbytes, flops_total)


# ------------------------------------------------------------------------- operator fusion
@dataclass(frozen=True)
class FusionStats:
    ops_before: int = 0
    kernels_after: int = 0
    bytes_saved: int = 0        # DRAM traffic removed per batch (writes + re-reads)
    tensors_elided: int = 0     # intermediate tensors never materialised


def _can_join(first: Op, group_names: set[str], has_asym: bool, op: Op) -> bool:
    cls = op_class(op)
    if cls == "opaque" or op_class(first) == "opaque":
        return False
    if (op.phase == "update") != (first.phase == "update"):
        # a weight update reads the finished gradient: under gradient accumulation it runs once
        # after every micro-batch, so it never joins a kernel of the per-micro-batch graph
        return False
    if cls == "asym" and has_asym:
        return False
    return any(t in group_names for t in op.inputs)


def fuse(ops: tuple[Op, ...]) -> tuple[tuple[Op, ...], tuple[tuple[tuple[str, int], ...], ...], FusionStats]:
    """Fuse ops into kernels (see the module docstring).

    Returns the kernels (ops whose cost is the fused kernel's: summed work, traffic without the
    elided intermediates, one launch), the tensors each kernel materialises as (name, bytes)
    pairs for liveness (kernels keep their members' tensor names, so readers need no renaming),
    and the savings.
    """
    readers: dict[str, list[int]] = {}
    for j, op in enumerate(ops):
        for t in op.inputs:
            readers.setdefault(t, []).append(j)
    groups: list[list[int]] = []
    cur: list[int] = []
    names: set[str] = set()
    asym = False
    for j, op in enumerate(ops):
        if cur and _can_join(ops[cur[0]], names, asym, op):
            cur.append(j)
        else:
            if cur:
                groups.append(cur)
            cur, names, asym = [j], set(), False
        names.add(op.name)
        asym = asym or op_class(op) == "asym"
    if cur:
        groups.append(cur)

    out_size = {op.name: op.out_bytes for op in ops}
    kernels: list[Op] = []
    outputs: list[tuple[tuple[str, int], ...]] = []
    saved = elided = 0
    for g in groups:
        members = [ops[i] for i in g]
        if len(g) == 1:
            m = members[0]
            kernels.append(m)
            outputs.append(((m.name, 0 if is_persistent(m) else m.out_bytes),))
            continue
        inside = set(g)
        member_names = {m.name for m in members}
        kept: list[Op] = []
        for i, m in zip(g, members):
            if is_persistent(m) or i == g[-1] or any(r not in inside for r in readers.get(m.name, ())):
                kept.append(m)
            else:
                elided += 1
        read = 0
        ext_inputs: list[str] = []
        for m in members:
            # reads of tensors made inside the kernel, and second reads of the same input, vanish
            gone = sum(out_size.get(t, 0) for t in m.inputs if t in member_names or t in ext_inputs)
            read += max(m.bytes_read - gone, 0)
            ext_inputs.extend(t for t in m.inputs if t not in member_names and t not in ext_inputs)
        written = sum(m.bytes_written for m in kept)
        before = sum(m.bytes_read + m.bytes_written for m in members)
        anchor = next((m for m in members if op_class(m) == "asym"),
                      max(members, key=lambda m: m.out_bytes))
        flops = sum(m.flops for m in members)
        attrs = {k: v for k, v in anchor.attrs if k != "persistent"}
        attrs["fused"] = "+".join(m.kind for m in members)
        if all(is_persistent(m) for m in kept):
            attrs["persistent"] = "1"
        live = tuple((m.name, m.out_bytes) for m in kept if not is_persistent(m))
        kernels.append(replace(
            anchor, name=members[-1].name, macs=sum(m.macs for m in members), flops=flops,
            bytes_read=read, bytes_written=written,
            weight_bytes=sum(m.weight_bytes for m in members),
            out_bytes=sum(b for _, b in live), saved_bytes=0, inputs=tuple(ext_inputs),
            params=anchor.params + (("fused", len(members)), ("fused_flops", flops)),
            attrs=tuple(sorted(attrs.items()))))
        outputs.append(live)
        saved += max(before - read - written, 0)
    return tuple(kernels), tuple(outputs), FusionStats(len(ops), len(kernels), saved, elided)


