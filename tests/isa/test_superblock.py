"""Compiled regions (isa.hvx.superblock): the vrmpy runs the encoder gathers leave the state of
program order, and the per-batch address check still finds tiles that access other addresses."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import isa.hvx as hvx
from isa.hvx import Builder, R, V, superblock
from isa.kernels import gemm

NB = superblock._BATCH          # tiles in one lockstep batch
TWO = NB + 2                    # tiles that fill one batch and start a second

def _ops(dst, src):
    return st.one_of(
        st.tuples(st.just("mpy"), dst, src, st.integers(2, 4)),
        st.tuples(st.just("vld"), st.integers(0, 5)),
        st.tuples(st.just("sld"), st.integers(2, 4)),
        st.tuples(st.just("add"), st.integers(0, 5), st.integers(0, 5), st.integers(0, 5)),
        st.tuples(st.just("asg"), st.integers(0, 5), st.integers(0, 5)),
        st.tuples(st.just("addi"), st.integers(2, 4)),
        st.tuples(st.just("st"), st.integers(0, 5)),
    )


_OPS = _ops(st.integers(0, 5), st.integers(0, 5))              # every kind of dependence
# accumulators v0-v3 and operands v4-v5 kept apart, mostly vrmpy: runs of groups of four on one Vu
_GEMMLIKE = st.one_of(_ops(st.integers(0, 3), st.integers(4, 5)),
                      st.tuples(st.just("mpy"), st.integers(0, 3), st.integers(4, 5), st.integers(2, 4)))


def _emit(b, op):
    k = op[0]
    if k == "mpy":
        b.vrmpybus_acc(V(op[1]), V(op[2]), R(op[3]))
    elif k == "vld":
        b.vL32b_pi(V(op[1]), R(1), 1, buf="X")
    elif k == "sld":
        b.L2_loadri_pi(R(op[1]), R(5), 4, buf="X")
    elif k == "add":
        b.vaddw(V(op[1]), V(op[2]), V(op[3]))
    elif k == "asg":
        b.vassign(V(op[1]), V(op[2]))
    elif k == "addi":
        b.A2_addi(R(op[1]), R(op[1]), 3)
    else:
        b.vS32b_pi(R(6), 1, V(op[1]), buf="Y")


def _program(head, body, count, tail):
    b = Builder("prop")
    ox = b.buffer("X", 96 * 128)
    oy = b.buffer("Y", 96 * 128)
    b.A2_tfrsi(R(1), ox)
    b.A2_tfrsi(R(5), ox)
    b.A2_tfrsi(R(6), oy)
    for op in head:
        _emit(b, op)
    if body:
        with b.loop(count):
            for op in body:
                _emit(b, op)
    for op in tail:
        _emit(b, op)
    return b.build()


def _run_both(prog, tiles, seed):
    out = []
    for fast_path in (True, False):
        s = hvx.HvxState(tiles, prog.mem_bytes)
        rng = np.random.default_rng(seed)
        s.mem[:] = rng.integers(0, 256, s.mem.shape, dtype=np.uint8)
        s.V[:] = rng.integers(0, 256, s.V.shape, dtype=np.uint8)
        hvx.run(prog, s, fast=fast_path)
        out.append(s)
    return out


def _check(head, body, count, tail, tiles, seed):
    prog = _program(head, body, count, tail)
    a, b = _run_both(prog, tiles, seed)
    assert (a.V == b.V).all() and (a.R == b.R).all() and (a.mem == b.mem).all()


@settings(max_examples=60, deadline=None)
@given(head=st.lists(_OPS, max_size=12), body=st.lists(_OPS, max_size=12), count=st.integers(1, 3),
       tail=st.lists(_OPS, max_size=8), tiles=st.sampled_from([1, NB - 1, TWO]), seed=st.integers(0, 2 ** 16))
def test_gathered_vrmpy_runs_leave_the_program_order_state(head, body, count, tail, tiles, seed):
    """Random straight-line code and a loop over six vector registers (dependences of every kind
    between vrmpy and the loads, stores and ALU operations around it): the compiled region, with
    its vrmpy runs, leaves the same registers and memory as the numpy path in program order."""
    _check(head, body, count, tail, tiles, seed)


@settings(max_examples=40, deadline=None)
@given(head=st.lists(_GEMMLIKE, max_size=16), body=st.lists(_GEMMLIKE, min_size=4, max_size=20),
       count=st.integers(1, 3), tail=st.lists(_GEMMLIKE, max_size=8), tiles=st.sampled_from([1, TWO]),
       seed=st.integers(0, 2 ** 16))
def test_fused_groups_of_four_leave_the_program_order_state(head, body, count, tail, tiles, seed):
    """GEMM-like code (accumulators apart from the vrmpy operands): runs reordered into groups of
    four on one Vu, each one fused vrmpy, leave the state of program order."""
    _check(head, body, count, tail, tiles, seed)


def test_groups_of_four():
    from isa.hvx.program import Instr

    def mpy(d, u, r):
        return Instr("vrmpybus_acc", (V(d), V(u), R(r)))
    run = [mpy(0, 8, 2), mpy(1, 9, 2), mpy(0, 8, 3), mpy(2, 8, 2), mpy(1, 8, 3), mpy(0, 8, 2), mpy(3, 9, 4)]
    groups, rest = superblock._groups_of_four(run)
    assert groups == [run[0], run[2], run[3], run[4]] and rest == [run[1], run[5], run[6]]
    assert superblock._groups_of_four(run + [mpy(8, 1, 2)]) == ([], run + [mpy(8, 1, 2)])   # v8 written


def test_gemm_loop_body_is_two_runs_of_sixteen():
    """The GEMM tile's k loop: each half (16 vrmpy on one operand set, 8 loads of the next set)
    becomes one run of 16 (four groups of four on one B vector) and the 8 loads after it; a vrmpy
    reading a register that an earlier load of the loop writes does not pass that load."""
    code = superblock.encode(gemm.build_gemm_tile(1024).body)
    ops = code[:, 0].tolist()
    loop = len(ops) - 1 - ops[::-1].index(superblock.OP_LOOP)      # the k loop, the last
    body = code[loop + 1:ops.index(superblock.OP_END, loop)]
    assert body[0].tolist() == [superblock.OP_VRMPYBUS_RUN, 16, 4, 0]        # 16 rows, 4 groups of four
    assert body[25].tolist() == [superblock.OP_VRMPYBUS_RUN, 16, 4, 0] and len(body) == 50
    assert (body[1:17, 0] == superblock.OP_VRMPYBUS_ACC).all()
    assert set(body[17:25, 0]) == {superblock.OP_VLOAD_PI, superblock.OP_SLOAD_PI}
    assert superblock.OP_NOP not in ops                     # loop setup left out of the table


def _indirect(kind):
    """Each tile loads a word of its own memory into r2 and uses it as an address."""
    b = Builder("ind")
    ox = b.buffer("X", 8 * 128)
    b.A2_tfrsi(R(1), ox)
    b.L2_loadri_io(R(2), R(1), 0, buf="X")
    if kind == "vload":
        b.vL32b_ai(V(0), R(2), 0, buf="X")
    elif kind == "sload":
        b.L2_loadri_io(R(3), R(2), 0, buf="X")
    else:
        b.vS32b_ai(R(2), 0, V(1), buf="X")
    return b.build(), ox


@pytest.mark.parametrize("kind", ["vload", "sload", "store"])
@pytest.mark.parametrize("odd_tile", [0, 1, NB + 1])
def test_a_tile_off_the_common_address_is_found(kind, odd_tile):
    """Tile ``odd_tile`` (first of its batch, inside the first batch, or in the second batch)
    addresses another vector than the rest: a fault with the uniformity check (compiled and
    numpy paths), and without it the compiled path makes every tile's own access."""
    prog, ox = _indirect(kind)

    def state():
        s = hvx.HvxState(TWO, prog.mem_bytes)
        s.mem[:] = np.arange(s.mem.shape[1], dtype=np.int64).astype(np.uint8)
        s.V[:, 1] = np.arange(TWO, dtype=np.uint8)[:, None]
        addr = np.full(TWO, ox + 256, np.int32)
        addr[odd_tile] = ox + 640
        s.mem[:, ox:ox + 4] = addr.view(np.uint8).reshape(TWO, 4)
        return s
    for fast_path in (True, False):
        with pytest.raises(hvx.MemoryFault, match="differ"):
            hvx.run(prog, state(), fast=fast_path)
    s, want = state(), state()
    hvx.run(prog, s, check_uniform=False)
    for t in range(TWO):
        a = int(want.mem[t, ox:ox + 4].view(np.int32)[0])
        if kind == "vload":
            want.V[t, 0] = want.mem[t, a:a + 128]
        elif kind == "sload":
            want.R[t, 3] = want.mem[t, a:a + 4].view(np.int32)[0]
        else:
            want.mem[t, a:a + 128] = want.V[t, 1]
        want.R[t, 1], want.R[t, 2] = ox, a
    a, b = s, want
    assert (a.V == b.V).all() and (a.R == b.R).all() and (a.mem == b.mem).all()


@pytest.mark.parametrize("odd_tile", [0, 2, NB + 1])
def test_a_tile_out_of_range_faults(odd_tile):
    prog, ox = _indirect("vload")
    s = hvx.HvxState(TWO, prog.mem_bytes)
    addr = np.full(TWO, ox, np.int32)
    addr[odd_tile] = prog.mem_bytes + 1024
    s.mem[:, ox:ox + 4] = addr.view(np.uint8).reshape(TWO, 4)
    with pytest.raises(hvx.MemoryFault, match="outside"):
        hvx.run(prog, s, check_uniform=False)


def test_two_shared_ranges():
    """A vector and a scalar load from each of two shared ranges read each tile's image, on the
    compiled and the numpy path; a store into either faults; sharing a range that overlaps one
    replaces it; a third range is refused."""
    b = Builder("two")
    oa = b.buffer("A", 256)
    oc = b.buffer("C", 256)
    ob = b.buffer("B", 256)
    b.A2_tfrsi(R(1), oa + 128)
    b.A2_tfrsi(R(2), ob + 4)
    b.vL32b_ai(V(0), R(1), 0, buf="A")
    b.vL32b_ai(V(1), R(2), 1, buf="B")
    b.L2_loadri_io(R(3), R(1), 8, buf="A")
    b.L2_loadri_io(R(4), R(2), 0, buf="B")
    b.A2_tfrsi(R(5), oc)
    b.vS32b_ai(R(5), 1, V(1), buf="C")
    prog = b.build()
    rng = np.random.default_rng(1)
    ia, ib = rng.integers(0, 256, (3, 256), dtype=np.uint8), rng.integers(0, 256, (2, 384), dtype=np.uint8)
    ga, gb = np.arange(6) % 3, np.arange(6) // 3
    out = []
    for fast_path in (True, False):
        s = hvx.HvxState(6, ob)
        s.share(ob, np.zeros((1, 384), np.uint8), np.zeros(6))
        s.share(oa, ia, ga)
        s.share(ob, ib, gb)                                      # replaces the first B range
        assert [o for o, _, _ in s.shares] == [oa, ob] and s.address_bytes == ob + 384 >= prog.mem_bytes
        with pytest.raises(ValueError):
            s.share(oc, ia, ga)
        hvx.run(prog, s, fast=fast_path)
        assert (s.V[:, 0] == ia[ga, 128:]).all() and (s.V[:, 1] == ib[gb, 128:256]).all()
        assert (s.R[:, 3] == ia[ga, 136:140].copy().view(np.int32)[:, 0]).all()
        assert (s.R[:, 4] == ib[gb, 4:8].copy().view(np.int32)[:, 0]).all()
        assert (s.mem[:, oc + 128:oc + 256] == ib[gb, 128:256]).all()
        out.append(s)
    for buf, off in (("A", oa), ("B", ob)):
        b = Builder("st")
        b.buffer("A", 256)
        b.buffer("C", 256)
        b.buffer("B", 256)
        b.A2_tfrsi(R(1), off)
        b.vS32b_ai(R(1), 0, V(0), buf=buf)
        p = b.build()
        for fast_path in (True, False):
            s = hvx.HvxState(6, ob)
            s.share(oa, ia, ga)
            s.share(ob, ib, gb)
            with pytest.raises(hvx.MemoryFault):
                hvx.run(p, s, fast=fast_path)


def test_plans_are_encoded_once_per_program():
    """A program's regions are encoded once and reused by every run (state-independent); an equal
    program built again gets a plan of its own with the same code, and the fast and numpy plans
    are kept apart."""
    from isa.hvx import executor
    p = gemm.build_gemm_tile(72)
    plan = executor._cached_plan(p, True)
    assert executor._cached_plan(p, True) is plan and plan[0][0] == "region" and len(plan) == 1
    assert all(step[0] == "instr" for step in executor._cached_plan(p, False)[:3])
    q = gemm.build_gemm_tile.__wrapped__(72)
    assert q is not p and executor._cached_plan(q, True) is not plan
    assert (executor._cached_plan(q, True)[0][1] == plan[0][1]).all()
    for tiles in (3, 9):                                          # one plan, two states
        a, b = _run_both(p, tiles, tiles)
        assert (a.V == b.V).all() and (a.mem == b.mem).all()
