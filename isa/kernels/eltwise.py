"""NITI requantisation (dynamic and static scale), ReLU, reduce-max and max-pool on HVX.

Dynamic requantisation follows Mandheling's listing: pass 1 re-reads the stored int32 tensor and
finds max|x| (vabs:sat + vmax, then a vror/vmax lane tree), the shift is 32 - clz - 7 (vcl0 on
the vector, vextract to a scalar, clamped at 0); pass 2 reloads the int32 values, adds the
rounding constant (saturating), shifts (vasr) and packs to int8 (two saturating vpack levels).
``build_requant_static`` is pass 2 alone with a stored shift, for a tensor already stored as
int32; the costed static path (as Mandheling runs it) is the producer's fused epilogue,
isa.kernels.gemm.emit_requant_static (see isa.kernels.costing).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from isa.hvx import Builder, HvxState, Program, R, V, run
from isa.hvx.timing import Timing, TimingConfig

from .layout import Geometry, pad_planes, tap_planes, tile_windows, untile_outputs
from .spatial import phase_split_hvx


def _emit_requant_pass(b: Builder, nvec: int, s_reg: int, rnd_reg: int) -> None:
    """Reload int32, add the rounding constant (saturating), shift, pack to int8, store.

    Software-pipelined over two register sets (loop unrolled by two): while set A is shifted
    and packed, set B is loaded and rounded, and the previous int8 vector is stored, so the
    shift unit (four vasr per output vector) stays busy."""
    b.lvsplatw(V(30), R(rnd_reg))
    b.A2_tfrsi(R(1), b._xoff)
    b.A2_tfrsi(R(2), b._yoff - 128)   # the first store writes a don't-care vector into X's guard
    sets = [(0, 1, 2, 3), (4, 5, 6, 7)]
    out = (16, 17)
    for j in range(4):                                   # prologue: load + round set 0
        b.vL32b_pi(V(sets[0][j]), R(1), 1, buf="X")
    for j in range(4):
        b.vaddwsat(V(sets[0][j]), V(sets[0][j]), V(30))
    with b.loop(-(-nvec // 2)):
        for half in (0, 1):
            a, nx = sets[half], sets[1 - half]
            sh = (8, 9, 10, 11)
            b.vL32b_pi(V(nx[0]), R(1), 1, buf="X")
            b.vasrw(V(sh[0]), V(a[0]), R(s_reg))
            b.vL32b_pi(V(nx[1]), R(1), 1, buf="X")
            b.vasrw(V(sh[1]), V(a[1]), R(s_reg))
            b.vS32b_pi(R(2), 1, V(out[1 - half]), buf="Y")   # previous output vector
            b.vL32b_pi(V(nx[2]), R(1), 1, buf="X")
            b.vasrw(V(sh[2]), V(a[2]), R(s_reg))
            b.vaddwsat(V(nx[0]), V(nx[0]), V(30))
            b.vpackwh_sat(V(12), V(sh[1]), V(sh[0]))
            b.vL32b_pi(V(nx[3]), R(1), 1, buf="X")
            b.vasrw(V(sh[3]), V(a[3]), R(s_reg))
            b.vaddwsat(V(nx[1]), V(nx[1]), V(30))
            b.vaddwsat(V(nx[2]), V(nx[2]), V(30))
            b.vpackwh_sat(V(13), V(sh[3]), V(sh[2]))
            b.vaddwsat(V(nx[3]), V(nx[3]), V(30))
            b.vpackhb_sat(V(out[half]), V(13), V(12))
    b.vS32b_pi(R(2), 1, V(out[1]), buf="Y")


def _requant_builder(name: str, nvec: int) -> Builder:
    b = Builder(name)
    nv2 = -(-nvec // 2) * 2
    b._xoff = b.buffer("X", (nv2 + 1) * 512)   # the pipeline reads one set past the end
    b._yoff = b.buffer("Y", nv2 * 128)
    b._soff = b.buffer("S", 128)
    return b


@lru_cache(maxsize=256)
def build_requant_dynamic(nvec: int) -> Program:
    """Dynamic-scale requantisation of ``nvec`` * 128 int32 values."""
    b = _requant_builder(f"requant_dynamic_{nvec}", nvec)
    b.A2_tfrsi(R(1), b._xoff)
    b.vd0(V(20))
    b.vd0(V(21))
    with b.loop(nvec):                                   # pass 1: max |x|
        for j in range(4):
            b.vL32b_pi(V(j), R(1), 1, buf="X")
        for j in range(4):
            b.vabsw_sat(V(4 + j), V(j))
        b.vmaxw(V(20), V(20), V(4))
        b.vmaxw(V(21), V(21), V(5))
        b.vmaxw(V(20), V(20), V(6))
        b.vmaxw(V(21), V(21), V(7))
    b.vmaxw(V(20), V(20), V(21))
    for sh in (64, 32, 16, 8, 4):
        b.A2_tfrsi(R(3), sh)
        b.vror(V(22), V(20), R(3))
        b.vmaxw(V(20), V(20), V(22))
    b.vcl0w(V(23), V(20))
    b.A2_tfrsi(R(3), 0)
    b.extractw(R(4), V(23), R(3))
    b.A2_tfrsi(R(5), 25)                                 # shift = 32 - clz - 7
    b.A2_sub(R(6), R(5), R(4))
    b.A2_max(R(6), R(6), R(3))
    b.A2_tfrsi(R(7), 1)
    b.S2_asl_r_r(R(8), R(7), R(6))
    b.S2_lsr_i_r(R(9), R(8), 1)                          # rounding constant 2**(shift-1)
    b.A2_tfrsi(R(10), b._soff)
    b.S2_storeri_io(R(10), 0, R(6), buf="S")
    _emit_requant_pass(b, nvec, 6, 9)                    # pass 2: reload, shift, pack
    return b.build()


@lru_cache(maxsize=256)
def build_requant_static(nvec: int) -> Program:
    """Static-scale requantisation: one pass with the stored shift."""
    b = _requant_builder(f"requant_static_{nvec}", nvec)
    b.A2_tfrsi(R(10), b._soff)
    b.L2_loadri_io(R(6), R(10), 0, buf="S")
    b.A2_tfrsi(R(7), 1)
    b.S2_asl_r_r(R(8), R(7), R(6))
    b.S2_lsr_i_r(R(9), R(8), 1)
    _emit_requant_pass(b, nvec, 6, 9)
    return b.build()


def _vec_layout(x: np.ndarray, per_vec: int):
    t, n = x.shape
    nvec = max(1, -(-n // per_vec))
    buf = np.zeros((t, nvec * per_vec), x.dtype)
    buf[:, :n] = x
    return buf, nvec


def requant_hvx(x: np.ndarray, shift: np.ndarray = None, config: TimingConfig = TimingConfig()):
    """Requantise each row of x [tiles, n] int32 to int8.  ``shift`` None -> dynamic scale.
    Returns (y int8 [tiles, n], shifts [tiles], Timing for one tile)."""
    t, n = x.shape
    xb, nvec = _vec_layout(x.astype(np.int32), 128)
    prog = build_requant_dynamic(nvec) if shift is None else build_requant_static(nvec)
    st = HvxState(t, prog.mem_bytes)
    st.write(prog.buffer("X").offset, xb)
    if shift is not None:
        st.write(prog.buffer("S").offset, np.asarray(shift, np.int32).reshape(t, 1))
    res = run(prog, st, config)
    y = st.read(prog.buffer("Y").offset, nvec * 128, np.int8)[:, :n]
    s = st.read(prog.buffer("S").offset, 4, np.int32)[:, 0]
    return y, s, res.timing


@lru_cache(maxsize=256)
def build_relu(nvec: int) -> Program:
    b = Builder(f"relu_{nvec}")
    ox = b.buffer("X", nvec * 128)
    oy = b.buffer("Y", nvec * 128)
    b.vd0(V(31))
    b.A2_tfrsi(R(1), ox)
    b.A2_tfrsi(R(2), oy)
    with b.loop(nvec):
        b.vL32b_pi(V(0), R(1), 1, buf="X")
        b.vmaxb(V(1), V(0), V(31))
        b.vS32b_pi(R(2), 1, V(1), buf="Y")
    return b.build()


@lru_cache(maxsize=256)
def build_reducemax(nvec: int) -> Program:
    b = Builder(f"reducemax_{nvec}")
    ox = b.buffer("X", nvec * 128)
    os_ = b.buffer("S", 128)
    b.A2_tfrsi(R(3), 0x80808080 - (1 << 32))            # every byte -128
    b.lvsplatw(V(1), R(3))
    b.A2_tfrsi(R(1), ox)
    with b.loop(nvec):
        b.vL32b_pi(V(0), R(1), 1, buf="X")
        b.vmaxb(V(1), V(1), V(0))
    for sh in (64, 32, 16, 8, 4, 2, 1):
        b.A2_tfrsi(R(3), sh)
        b.vror(V(2), V(1), R(3))
        b.vmaxb(V(1), V(1), V(2))
    b.A2_tfrsi(R(3), 0)
    b.extractw(R(4), V(1), R(3))
    b.S2_asl_i_r(R(4), R(4), 24)
    b.S2_asr_i_r(R(4), R(4), 24)
    b.A2_tfrsi(R(5), os_)
    b.S2_storeri_io(R(5), 0, R(4), buf="S")
    return b.build()


def relu_hvx(x: np.ndarray, config: TimingConfig = TimingConfig()):
    t, n = x.shape
    xb, nvec = _vec_layout(x.astype(np.int8), 128)
    prog = build_relu(nvec)
    st = HvxState(t, prog.mem_bytes)
    st.write(prog.buffer("X").offset, xb)
    res = run(prog, st, config)
    return st.read(prog.buffer("Y").offset, nvec * 128, np.int8)[:, :n], res.timing


def reducemax_hvx(x: np.ndarray, config: TimingConfig = TimingConfig()):
    t, n = x.shape
    xb = np.full((t, max(1, -(-n // 128)) * 128), -128, np.int8)
    xb[:, :n] = x
    prog = build_reducemax(xb.shape[1] // 128)
    st = HvxState(t, prog.mem_bytes)
    st.write(prog.buffer("X").offset, xb)
    res = run(prog, st, config)
    return st.read(prog.buffer("S").offset, 4, np.int32)[:, 0], res.timing


@lru_cache(maxsize=128)
def build_maxpool_tile(g: Geometry) -> Program:
    """One plane x 128 output positions: vmemu per window tap, vmax.b, one store."""
    b = Builder(f"maxpool_tile_{g}")
    ox = b.buffer("X", g.nphase * g.window)
    oy = b.buffer("Y", 128)
    taps = g.taps()
    for i, (phase, shift) in enumerate(taps):
        b.A2_tfrsi(R(1 + i % 4), ox + phase * g.window + shift)
        b.vL32Ub_ai(V(2 + i % 2), R(1 + i % 4), 0, buf="X")
        if i == 0:
            b.vassign(V(0), V(2))
        else:
            b.vmaxb(V(0), V(0), V(2 + i % 2))
    b.A2_tfrsi(R(8), oy)
    b.vS32b_ai(R(8), 0, V(0), buf="Y")
    return b.build()


def maxpool_hvx(x: np.ndarray, k: int, stride: int, config: TimingConfig = TimingConfig()):
    n, c, h, w = x.shape
    g = Geometry(h, w, k, k, stride, 0)
    total = Timing()
    phases = None
    if stride == 2:
        phases, t = phase_split_hvx(pad_planes(x, g), g, config)
        total.add(t)
    elif stride != 1:
        raise ValueError("stride 1 or 2")
    planes = tap_planes(x, g, phases)
    wins = tile_windows(planes.reshape(n * c, 1, g.nphase, -1), g)
    prog = build_maxpool_tile(g)
    st = HvxState(wins.shape[0], prog.mem_bytes)
    st.write(prog.buffer("X").offset, wins.reshape(wins.shape[0], -1))
    res = run(prog, st, config)
    total.add(res.timing, wins.shape[0])
    y = st.read(prog.buffer("Y").offset, 128, np.int8).reshape(-1, 1, 128)
    return untile_outputs(y, g, n * c).reshape(n, c, g.oh, g.ow), total
