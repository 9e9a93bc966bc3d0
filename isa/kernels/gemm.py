"""INT8 GEMM on HVX with vrmpy (Vx.w += vrmpy(Vu.ub, Rt.b)).

One tile computes C[4 rows, 128 columns] (int32) over the whole reduction K:

* The vector operand is B, packed by the host as in every HVX GEMM: for each group of four k
  and each of the tile's four 32-column blocks, one 128-byte vector [32 columns][4 k].  vrmpy
  multiplies unsigned bytes, so B is stored biased (B + 128, i.e. B xor 0x80) and the kernel
  corrects with -128 * rowsum(A), which it computes itself in a pre-pass (vrmpy of each A row
  with a vector of ones, then a vror/vadd reduction tree).
* The scalar operand is A: one memw per row and k-group gives four signed bytes.
* The k loop is unrolled by two with double-buffered operand registers, so the loads for the next
  k-group issue beside the 16 multiplies of the current one: 8 packets per k-group, both
  multiply halves busy every packet (256 MAC/cycle).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from isa.hvx import Builder, HvxState, Program, R, V, run
from isa.hvx.state import aligned_zeros
from isa.hvx.timing import Timing, TimingConfig

MR = 4      # rows (A) per tile
NB = 4      # 32-column vector blocks per tile
NCOL = NB * 32


def kgroups(k: int) -> int:
    """Number of 4-element k groups, rounded up to the unroll factor of two."""
    k4 = -(-k // 4)
    return k4 + (k4 % 2)


def a_row_bytes(k: int) -> int:
    return -(-kgroups(k) * 4 // 128) * 128


def emit_rowsum_correction(b: Builder, a_ptrs: list, ka: int, acc_of_row, ones: int, tmp: int, rot: int) -> None:
    """acc_of_row(r) <- -128 * sum(A[r, :]) in every lane (pre-pass of the biased-B trick)."""
    b.A2_tfrsi(R(rot), 0x01010101)
    b.lvsplatw(V(ones), R(rot))
    for r, pa in enumerate(a_ptrs):
        s = acc_of_row(r)
        b.vd0(V(s))
        b.A2_tfr(R(rot), R(pa))
        with b.loop(ka // 128):
            b.vL32b_pi(V(tmp), R(rot), 1, buf="A")
            b.vrmpybv_acc(V(s), V(tmp), V(ones))
        for sh in (64, 32, 16, 8, 4):   # lane reduction tree: every lane ends with the total
            b.A2_tfrsi(R(rot), sh)
            b.vror(V(tmp), V(s), R(rot))
            b.vaddw(V(s), V(s), V(tmp))
        b.A2_tfrsi(R(rot), 7)
        b.vaslw(V(tmp), V(s), R(rot))
        b.vd0(V(s))
        b.vsubw(V(s), V(s), V(tmp))


def emit_gemm_core(b: Builder, k4: int, a_ptrs: list, pb: int, acc, bufA: str = "A", bufB: str = "B") -> None:
    """The double-buffered vrmpy loop over ``k4`` k-groups (k4 even)."""
    bsets = [[16 + i for i in range(NB)], [20 + i for i in range(NB)]]
    asets = [[6 + r for r in range(MR)], [10 + r for r in range(MR)]]
    for nb in range(NB):
        b.vL32b_pi(V(bsets[0][nb]), R(pb), 1, buf=bufB)
    for r in range(MR):
        b.L2_loadri_pi(R(asets[0][r]), R(a_ptrs[r]), 4, buf=bufA)
    with b.loop(k4 // 2):
        for cur in (0, 1):
            nxt = 1 - cur
            loads = []
            for nb in range(NB):
                loads.append(("vL32b_pi", (V(bsets[nxt][nb]), R(pb), 1), bufB))
                if nb < MR:
                    loads.append(("L2_loadri_pi", (R(asets[nxt][nb]), R(a_ptrs[nb]), 4), bufA))
            li = iter(loads)
            for nb in range(NB):
                for r in range(MR):
                    b.vrmpybus_acc(V(acc(r, nb)), V(bsets[cur][nb]), R(asets[cur][r]))
                    if r % 2 == 1:
                        op, args, buf = next(li)
                        b.emit(op, *args, buf=buf)


EPILOGUES = ("int32", "requant_static")
SHIFT_REG, RND_REG, S_PTR = 17, 18, 19      # scalar registers of the static-shift epilogue
RND_V = 30                                  # vector register holding the splatted rounding constant


def emit_requant_setup(b: Builder, buf: str = "S") -> None:
    """Load the known shift from ``buf`` and splat the rounding constant 2**(shift-1) into V30."""
    b.A2_tfrsi(R(S_PTR), b._soff)
    b.L2_loadri_io(R(SHIFT_REG), R(S_PTR), 0, buf=buf)
    b.A2_tfrsi(R(RND_REG), 1)
    b.S2_asl_r_r(R(RND_REG), R(RND_REG), R(SHIFT_REG))
    b.S2_lsr_i_r(R(RND_REG), R(RND_REG), 1)
    b.lvsplatw(V(RND_V), R(RND_REG))


def emit_store_int32(b: Builder, acc, ptr: int, buf: str = "C") -> None:
    """The plain epilogue: the MR x NB int32 accumulators to memory (16 stores)."""
    for r in range(MR):
        for nb in range(NB):
            b.vS32b_pi(R(ptr), 1, V(acc(r, nb)), buf=buf)


def emit_requant_static(b: Builder, acc, ptr: int, buf: str = "C") -> None:
    """Static-shift epilogue (NITI with a known scale, as Mandheling fuses it): on the accumulators
    in registers, add the rounding constant (saturating), shift, pack w->h->b with saturation, and
    store one int8 vector per row (128 columns in order).  Hand-scheduled, one packet per step:
    the shift unit (one vasr per packet) is the bottleneck; vadd runs two steps ahead, each
    vpack/store reads results at least two packets old (no multiply/shift/permute stalls)."""
    n = MR * NB
    el = [acc(r, nb) for r in range(MR) for nb in range(NB)]
    steps = {}

    def at(step, op, *args, **kw):
        steps.setdefault(step, []).append((op, args, kw))
    for i in range(n):
        at(max(0, i - 2), "vaddwsat", V(el[i]), V(el[i]), V(RND_V))
        at(i + 1, "vasrw", V(el[i]), V(el[i]), R(SHIFT_REG))
    for r in range(MR):
        lo, hi, out = V(16 + 3 * (r % 2)), V(17 + 3 * (r % 2)), V(18 + 3 * (r % 2))
        e = 4 * r + 1                                           # step of the row's first vasr
        at(e + 3, "vpackwh_sat", lo, V(acc(r, 1)), V(acc(r, 0)))
        at(e + 5, "vpackwh_sat", hi, V(acc(r, 3)), V(acc(r, 2)))
        at(e + 8, "vpackhb_sat", out, hi, lo)
        at(e + 10, "vS32b_pi", R(ptr), 1, out, buf=buf)
    for step in sorted(steps):
        with b.packet():
            for op, args, kw in steps[step]:
                b.emit(op, *args, **kw)


def emit_epilogue(b: Builder, epilogue: str, acc, ptr: int, buf: str = "C") -> None:
    if epilogue == "int32":
        emit_store_int32(b, acc, ptr, buf)
    elif epilogue == "requant_static":
        emit_requant_static(b, acc, ptr, buf)
    else:
        raise ValueError(f"epilogue {epilogue!r}; known: {EPILOGUES}")


def out_bytes_per_tile(epilogue: str) -> int:
    return MR * NB * 128 if epilogue == "int32" else MR * 128


@lru_cache(maxsize=64)
def build_gemm_tile(k: int, epilogue: str = "int32") -> Program:
    """Program for one 4x128 output tile with reduction length ``k``.  ``epilogue`` "int32" stores
    the accumulators; "requant_static" applies the known shift in registers and stores int8."""
    if epilogue not in EPILOGUES:
        raise ValueError(f"epilogue {epilogue!r}; known: {EPILOGUES}")
    k4 = kgroups(k)
    ka = a_row_bytes(k)
    b = Builder(f"gemm_tile_k{k}_{epilogue}")
    oa = b.buffer("A", MR * ka)
    oc = b.buffer("C", out_bytes_per_tile(epilogue))
    if epilogue == "requant_static":
        b._soff = b.buffer("S", 128)
    ob = b.buffer("B", (k4 + 2) * NB * 128)   # last: gemm_hvx backs it with shared panels
    a_ptrs = [2, 3, 4, 5]
    for r, pa in enumerate(a_ptrs):
        b.A2_tfrsi(R(pa), oa + r * ka)

    def acc(r, nb):
        return r * NB + nb
    if epilogue == "requant_static":
        emit_requant_setup(b)
    emit_rowsum_correction(b, a_ptrs, ka, lambda r: acc(r, 0), ones=24, tmp=25, rot=14)
    for r in range(MR):
        for nb in range(1, NB):
            b.vassign(V(acc(r, nb)), V(acc(r, 0)))
    b.A2_tfrsi(R(1), ob)
    emit_gemm_core(b, k4, a_ptrs, 1, acc)
    b.A2_tfrsi(R(15), oc)
    emit_epilogue(b, epilogue, acc, 15)
    return b.build()


def pack_b(bmat: np.ndarray, k4: int) -> np.ndarray:
    """B [K, 128] int8 -> biased vrmpy layout [k4][NB][32][4] uint8 (host-side weight/activation packing)."""
    return pack_panels(bmat, k4)[0].reshape(k4, NB, 32, 4)


def pack_panels(bmat: np.ndarray, k4: int, out: np.ndarray = None) -> np.ndarray:
    """B [K, nt * 128] int8 -> every column block's biased panel, [nt][k4][NB][32][4] uint8, in one
    pass (x + 128 == x xor 0x80 for int8); written into ``out`` (rows of at least k4 * 512 bytes,
    the rest left as it is) when given."""
    kk, ncols = bmat.shape
    nt = ncols // NCOL
    u = np.full((k4 * 4, ncols), 0x80, np.uint8) if kk != k4 * 4 else None   # zero rows of B added
    if u is None:
        u = bmat.view(np.uint8) ^ np.uint8(0x80)
    else:
        u[:kk] = bmat.view(np.uint8) ^ np.uint8(0x80)
    # the four bytes of one k group and column as one little-endian word (byte q = k 4g + q), then
    # whole 128-column rows of words moved into place: no byte-wise gather
    inter = np.empty((k4, ncols, 4), np.uint8)
    for q in range(4):
        inter[:, :, q] = u[q::4]
    w = inter.view("<u4")[..., 0]                        # [k4, ncols]
    if out is None:
        out = np.zeros((nt, k4 * NB * 128), np.uint8)
    out[:, :k4 * NB * 128].view("<u4").reshape(nt, k4, NCOL)[...] = w.reshape(k4, nt, NCOL).transpose(1, 0, 2)
    return out


def gemm_hvx(a: np.ndarray, bmat: np.ndarray, config: TimingConfig = TimingConfig(), shift: int = None):
    """C = A @ B on the emulator (all output tiles as one tile batch); returns (C, Timing).
    C is int32, or with ``shift`` the int8 NITI requantisation of A @ B by that known shift,
    computed in the kernel's epilogue."""
    m, k = a.shape
    k2, n = bmat.shape
    assert k == k2
    epilogue = "int32" if shift is None else "requant_static"
    prog = build_gemm_tile(k, epilogue)
    k4, ka = kgroups(k), a_row_bytes(k)
    mt, nt = -(-m // MR), -(-n // NCOL)
    a = np.ascontiguousarray(a, np.int8)
    if (m, k) != (mt * MR, ka):
        ap = np.zeros((mt * MR, ka), np.int8)
        ap[:m, :k] = a
    else:
        ap = a
    bmat = np.ascontiguousarray(bmat, np.int8)
    if n != nt * NCOL:
        bpad = np.zeros((k, nt * NCOL), np.int8)
        bpad[:, :n] = bmat
    else:
        bpad = bmat
    A = prog.buffer("A")
    B = prog.buffer("B")
    C = prog.buffer("C")
    st = HvxState(mt * nt, B.offset)                  # private memory: C (and S); A's bytes unused
    # tile j * mt + i = row block i of column block j.  Its A rows are row block i's image, shared
    # by the nt tiles of that row block; the B panel of column block j is one image shared by its
    # mt tiles (a DMA broadcast, no per-tile copies; neighbouring tiles read the same panel, so it
    # stays in the host's cache)
    tile = np.arange(mt * nt)
    st.share(A.offset, ap.reshape(mt, MR * ka), tile % mt)
    if shift is not None:
        st.write(prog.buffer("S").offset, np.full((mt * nt, 1), shift, np.int32))
    packs = aligned_zeros((nt, prog.mem_bytes - B.offset))   # the panel and its guard vector
    pack_panels(bpad, k4, packs)
    st.share(B.offset, packs, tile // mt)
    res = run(prog, st, config)
    dt = np.int32 if shift is None else np.int8
    out = st.mem[:, C.offset:C.offset + C.size].view(dt).reshape(nt, mt, MR, NCOL)   # a view
    c = out.transpose(1, 2, 0, 3).reshape(mt * MR, nt * NCOL)[:m, :n]                  # the one copy
    total = Timing()
    total.add(res.timing, mt * nt)
    return c, total
