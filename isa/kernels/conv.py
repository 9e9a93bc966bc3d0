"""conv2d (forward), its transposed convolution (dgrad) and depthwise conv2d as HVX programs.

conv2d is lowered the way an HVX library lowers it: per 128-output-position tile, an im2col pass
builds the vrmpy operand directly from the padded input planes (four unaligned channel loads per
tap and channel group, two levels of vshuff to interleave the four channels, xor 0x80 to bias),
then the GEMM core (isa.kernels.gemm) runs over all output-channel row blocks.  Stride 2 goes
through the HVX phase split first.  dgrad is the transposed convolution: the host dilates and
pads dY and rotates the weights (Mandheling keeps WeightRotate on the CPU), then the same conv
kernel runs with stride 1.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from isa.hvx import Builder, HvxState, Program, R, V, W, run
from isa.hvx.timing import Timing, TimingConfig

from . import gemm
from .layout import Geometry, rup, tap_planes, tile_windows, untile_outputs, pad_planes
from .spatial import phase_split_hvx


def _geom(h, w, kh, kw, stride, pad) -> Geometry:
    if stride not in (1, 2):
        raise ValueError("stride 1 or 2")
    return Geometry(h, w, kh, kw, stride, pad)


@lru_cache(maxsize=128)
def build_conv_tile(g: Geometry, cin: int, cout: int, row_blocks: int = None, epilogue: str = "int32") -> Program:
    """im2col + vrmpy GEMM for one 128-position tile; ``row_blocks`` limits the output-channel
    blocks emitted (costing emulates a representative subset); ``epilogue`` as in
    gemm.build_gemm_tile ("requant_static": int8 out, shift applied in registers)."""
    cin_p = rup(cin, 4)
    taps = g.taps()
    k = len(taps) * cin_p
    k4 = gemm.kgroups(k)
    ka = gemm.a_row_bytes(k)
    nrb = -(-cout // gemm.MR) if row_blocks is None else row_blocks
    win, nph = g.window, g.nphase
    b = Builder(f"conv_tile_{g}_{cin}x{cout}_{epilogue}")
    ox = b.buffer("X", cin_p * nph * win)
    oa = b.buffer("A", nrb * gemm.MR * ka)
    ob = b.buffer("B", (k4 + 2) * gemm.NB * 128)
    oc = b.buffer("C", nrb * gemm.out_bytes_per_tile(epilogue))
    if epilogue == "requant_static":
        b._soff = b.buffer("S", 128)
    # ---- im2col: B[k-group = (tap, 4 channels)][4 x 32 positions][4 channels], biased ----
    b.A2_tfrsi(R(20), 0x80808080 - (1 << 32))     # bias splat: xor 0x80 per byte
    b.lvsplatw(V(31), R(20))
    b.A2_tfrsi(R(21), -1)
    b.A2_tfrsi(R(22), -2)
    b.A2_tfrsi(R(1), ob)
    step = 4 * nph * win
    for phase, shift in taps:
        for j in range(4):
            b.A2_tfrsi(R(2 + j), ox + (j * nph + phase) * win + shift)
        with b.loop(cin_p // 4):
            for j in range(4):
                b.vL32Ub_ai(V(j), R(2 + j), 0, buf="X")
            for j in range(4):
                b.A2_addi(R(2 + j), R(2 + j), step)
            b.vshuffvdd(W(4), V(1), V(0), R(21))
            b.vshuffvdd(W(6), V(3), V(2), R(21))
            b.vshuffvdd(W(8), V(6), V(4), R(22))
            b.vshuffvdd(W(10), V(7), V(5), R(22))
            for j in range(4):
                b.vxor(V(12 + j), V(8 + j), V(31))
            for j in range(4):
                b.vS32b_pi(R(1), 1, V(12 + j), buf="B")
    # ---- GEMM over the output-channel row blocks ----
    if epilogue == "requant_static":
        gemm.emit_requant_setup(b)
    b.A2_tfrsi(R(16), oa)
    b.A2_tfrsi(R(15), oc)
    with b.loop(nrb):
        a_ptrs = [2, 3, 4, 5]
        for r in range(gemm.MR):
            b.A2_addi(R(a_ptrs[r]), R(16), r * ka)
        gemm.emit_rowsum_correction(b, a_ptrs, ka, lambda r: r * gemm.NB, ones=24, tmp=25, rot=14)
        for r in range(gemm.MR):
            b.A2_addi(R(a_ptrs[r]), R(16), r * ka)
            for nb in range(1, gemm.NB):
                b.vassign(V(r * gemm.NB + nb), V(r * gemm.NB))
        b.A2_tfrsi(R(1), ob)
        gemm.emit_gemm_core(b, k4, a_ptrs, 1, lambda r, nb: r * gemm.NB + nb)
        gemm.emit_epilogue(b, epilogue, lambda r, nb: r * gemm.NB + nb, 15)
        b.A2_addi(R(16), R(16), gemm.MR * ka)
    return b.build()


def pack_weights(w: np.ndarray, cin_p: int, ka: int, rows: int) -> np.ndarray:
    """[Cout, Cin, KH, KW] -> A rows [rows, ka] int8 with k = tap * cin_p + ci (host weight layout)."""
    cout, cin, kh, kw = w.shape
    a = np.zeros((rows, kh * kw, cin_p), np.int8)
    a[:cout, :, :cin] = w.transpose(0, 2, 3, 1).reshape(cout, kh * kw, cin)
    out = np.zeros((rows, ka), np.int8)
    out[:, :kh * kw * cin_p] = a.reshape(rows, -1)
    return out


def conv2d_hvx(x: np.ndarray, w: np.ndarray, stride: int, pad: int, config: TimingConfig = TimingConfig(),
               shift: int = None):
    """y = conv2d(x, w) on the emulator; returns (y [N, Cout, OH, OW], Timing).  y is int32, or
    with ``shift`` the int8 NITI requantisation by that known shift, done in the epilogue."""
    n, cin, h, wd = x.shape
    cout, _, kh, kw = w.shape
    g = _geom(h, wd, kh, kw, stride, pad)
    total = Timing()
    phases = None
    if stride == 2:
        phases, t = phase_split_hvx(pad_planes(x, g), g, config)
        total.add(t)
    cin_p = rup(cin, 4)
    xin = np.zeros((n, cin_p) + x.shape[2:], np.int8)
    xin[:, :cin] = x
    if phases is not None:
        ph = np.zeros((n, cin_p) + phases.shape[2:], np.int8)
        ph[:, :cin] = phases
        phases = ph
    planes = tap_planes(xin, g, phases)
    wins = tile_windows(planes, g)
    epilogue = "int32" if shift is None else "requant_static"
    prog = build_conv_tile(g, cin, cout, None, epilogue)
    k = len(g.taps()) * cin_p
    ka = gemm.a_row_bytes(k)
    nrb = -(-cout // gemm.MR)
    st = HvxState(wins.shape[0], prog.mem_bytes)
    st.write(prog.buffer("X").offset, wins.reshape(wins.shape[0], -1))
    a = pack_weights(w, cin_p, ka, nrb * gemm.MR)
    st.write(prog.buffer("A").offset, np.broadcast_to(a.reshape(1, -1), (wins.shape[0], a.size)))
    if shift is not None:
        st.write(prog.buffer("S").offset, np.full((wins.shape[0], 1), shift, np.int32))
    res = run(prog, st, config)
    total.add(res.timing, wins.shape[0])
    cbuf = prog.buffer("C")
    c = st.read(cbuf.offset, cbuf.size, np.int32 if shift is None else np.int8)
    c = c.reshape(wins.shape[0], nrb * gemm.MR, 128)[:, :cout]
    return untile_outputs(c, g, n), total


def dgrad_operands(dy: np.ndarray, w: np.ndarray, in_hw: tuple, stride: int, pad: int):
    """Transposed conv as a stride-1 conv: dilated, padded dY and rotated, transposed weights."""
    n, cout, oh, ow = dy.shape
    _, cin, kh, kw = w.shape
    hh, ww = in_hw
    dh, dw = (oh - 1) * stride + 1, (ow - 1) * stride + 1
    top, left = kh - 1 - pad, kw - 1 - pad
    bottom = hh - 1 + pad - (oh - 1) * stride
    right = ww - 1 + pad - (ow - 1) * stride
    if min(top, left) < 0:
        raise ValueError("pad larger than kernel-1 is not supported by the transposed conv lowering")
    z = np.zeros((n, cout, top + dh + max(bottom, 0), left + dw + max(right, 0)), np.int8)
    z[:, :, top:top + dh:stride, left:left + dw:stride] = dy
    z = z[:, :, :hh + kh - 1, :ww + kw - 1]
    w_rot = np.ascontiguousarray(w[:, :, ::-1, ::-1].transpose(1, 0, 2, 3))
    return z, w_rot


def conv2d_dgrad_hvx(dy: np.ndarray, w: np.ndarray, in_hw: tuple, stride: int, pad: int,
                     config: TimingConfig = TimingConfig()):
    """dX of conv2d (transposed convolution) on the emulator; returns (dX int32, Timing)."""
    z, w_rot = dgrad_operands(dy, w, in_hw, stride, pad)
    return conv2d_hvx(z, w_rot, 1, 0, config)


# ---- depthwise ------------------------------------------------------------------------------

@lru_cache(maxsize=128)
def build_dwconv_tile(g: Geometry) -> Program:
    """One channel x 128 positions: per tap vmemu + vsb + two vmpyh accumulates; a final
    two-level vshuff restores position order of the four word accumulators."""
    taps = g.taps()
    win = g.window
    b = Builder(f"dwconv_tile_{g}")
    ox = b.buffer("X", g.nphase * win)
    ow_ = b.buffer("Wt", rup(4 * len(taps), 128))
    oy = b.buffer("Y", 4 * 128)
    for v in range(4):
        b.vd0(V(v))
    b.A2_tfrsi(R(2), ow_)
    for phase, shift in taps:
        b.A2_tfrsi(R(1), ox + phase * win + shift)
        b.L2_loadri_pi(R(3), R(2), 4, buf="Wt")
        b.vL32Ub_ai(V(4), R(1), 0, buf="X")
        b.vsb(W(6), V(4))
        b.vmpyh_acc(W(0), V(6), R(3))      # positions 4j (v0) and 4j+2 (v1)
        b.vmpyh_acc(W(2), V(7), R(3))      # positions 4j+1 (v2) and 4j+3 (v3)
    b.A2_tfrsi(R(4), -4)
    b.A2_tfrsi(R(5), -8)
    b.vshuffvdd(W(8), V(2), V(0), R(4))
    b.vshuffvdd(W(10), V(3), V(1), R(4))
    b.vshuffvdd(W(12), V(10), V(8), R(5))
    b.vshuffvdd(W(14), V(11), V(9), R(5))
    b.A2_tfrsi(R(6), oy)
    for j in (12, 13, 14, 15):
        b.vS32b_pi(R(6), 1, V(j), buf="Y")
    return b.build()


def dwconv2d_hvx(x: np.ndarray, w: np.ndarray, stride: int, pad: int, config: TimingConfig = TimingConfig()):
    """Depthwise conv on the emulator: x [N, C, H, W], w [C, KH, KW] -> (y int32, Timing)."""
    n, c, h, wd = x.shape
    _, kh, kw = w.shape
    g = _geom(h, wd, kh, kw, stride, pad)
    total = Timing()
    phases = None
    if stride == 2:
        phases, t = phase_split_hvx(pad_planes(x, g), g, config)
        total.add(t)
    planes = tap_planes(x, g, phases)                       # [N, C, nph, plane_len]
    wins = tile_windows(planes.reshape(n * c, 1, g.nphase, -1), g)  # [(N*C)*ntiles, 1, nph, win]
    prog = build_dwconv_tile(g)
    tiles = wins.shape[0]
    st = HvxState(tiles, prog.mem_bytes)
    st.write(prog.buffer("X").offset, wins.reshape(tiles, -1))
    wt = (w.reshape(c, -1).astype(np.int64) & 0xFFFF) * 0x10001
    wt = np.broadcast_to(wt[None, :, None, :], (n, c, g.ntiles, kh * kw)).reshape(tiles, -1)
    st.write(prog.buffer("Wt").offset, wt.astype(np.uint32))
    res = run(prog, st, config)
    total.add(res.timing, tiles)
    y = st.read(prog.buffer("Y").offset, 512, np.int32).reshape(n * c, g.ntiles, 1, 128)
    y = y.transpose(0, 2, 1, 3).reshape(n * c * g.ntiles, 1, 128)
    out = untile_outputs(y.reshape(n * c, g.ntiles, 1, 128).reshape(n * c * g.ntiles, 1, 128), g, n * c)
    return out.reshape(n, c, g.oh, g.ow), total
