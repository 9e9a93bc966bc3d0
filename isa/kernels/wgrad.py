"""Conv weight gradient (ConvBackpropFilter) as an HVX program.

dW[co, ci, tap] = sum over images and positions of dY[co, n] * X[ci, n + shift(tap)].  Both
operands are activations laid out along positions, so the kernel multiplies them vector by
vector with the signed 4-way reduction Vx.w += vrmpy(Vu.b, Vv.b): one tile keeps a 4 (co) x 4 (ci)
block of accumulators for one tap, streams 128-position chunks (four dY loads, four unaligned X
loads, 16 vrmpy per chunk; vrmpy.b x b is double-width, so 128 MAC/cycle), and finally folds the
16 accumulators into one vector with a vshuff/vadd tree (element size 4, 8, 16, 32 bytes, then a
64-byte vror) whose lanes 0..15 hold the 16 sums.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from isa.hvx import Builder, HvxState, Program, R, V, W, run
from isa.hvx.timing import Timing, TimingConfig

from .layout import Geometry, pad_planes, rup, tap_planes
from .spatial import phase_split_hvx

CB = 4   # output channels per tile
IB = 4   # input channels per tile


@lru_cache(maxsize=128)
def build_wgrad_tile(g: Geometry, nimg: int, phase: int, shift: int) -> Program:
    chunks = g.ntiles
    plane = g.plane_len
    b = Builder(f"wgrad_tile_{g}_{nimg}_{phase}_{shift}")
    ody = b.buffer("dY", CB * nimg * chunks * 128)
    ox = b.buffer("X", IB * nimg * g.nphase * plane)
    oo = b.buffer("dW", 128)
    for i in range(16):
        b.vd0(V(i))
    dyp = [1 + c for c in range(CB)]
    xp = [5 + c for c in range(IB)]
    for c in range(CB):
        b.A2_tfrsi(R(dyp[c]), ody + c * nimg * chunks * 128)
    for c in range(IB):
        b.A2_tfrsi(R(xp[c]), ox + (c * nimg * g.nphase + phase) * plane + shift)
    with b.loop(nimg):
        with b.loop(chunks):
            for c in range(CB):
                b.vL32b_pi(V(16 + c), R(dyp[c]), 1, buf="dY")
            for c in range(IB):
                b.vL32Ub_pi(V(20 + c), R(xp[c]), 1, buf="X")
            for co in range(CB):
                for ci in range(IB):
                    b.vrmpybv_acc(V(co * IB + ci), V(16 + co), V(20 + ci))
        for c in range(IB):   # next image's plane for this channel
            b.A2_addi(R(xp[c]), R(xp[c]), g.nphase * plane - chunks * 128)
    # fold 16 accumulators: lanes 0..15 of the result hold acc 0..15
    regs = list(range(16))
    free = [24, 26, 28, 30]          # scratch pairs for the vshuff outputs
    for size in (4, 8, 16, 32):
        b.A2_tfrsi(R(10), -size)
        nxt = []
        for p in range(0, len(regs), 2):
            pair = free[(p // 2) % 4]
            b.vshuffvdd(W(pair), V(regs[p + 1]), V(regs[p]), R(10))
            dst = regs[p]
            b.vaddw(V(dst), V(pair), V(pair + 1))
            nxt.append(dst)
        regs = nxt
    b.A2_tfrsi(R(10), 64)
    b.vror(V(24), V(regs[0]), R(10))
    b.vaddw(V(25), V(regs[0]), V(24))
    b.A2_tfrsi(R(11), oo)
    b.vS32b_ai(R(11), 0, V(25), buf="dW")
    return b.build()


def conv2d_wgrad_hvx(x: np.ndarray, dy: np.ndarray, kh: int, kw: int, stride: int, pad: int,
                     config: TimingConfig = TimingConfig()):
    """dW [Cout, Cin, KH, KW] int32 on the emulator; returns (dW, Timing)."""
    n, cin, h, w = x.shape
    _, cout, oh, ow = dy.shape
    g = Geometry(h, w, kh, kw, stride, pad)
    assert (oh, ow) == (g.oh, g.ow)
    total = Timing()
    phases = None
    if stride == 2:
        phases, t = phase_split_hvx(pad_planes(x, g), g, config)
        total.add(t)
    cin_p, cout_p = rup(cin, IB), rup(cout, CB)
    xi = np.zeros((n, cin_p, h, w), np.int8)
    xi[:, :cin] = x
    if phases is not None:
        ph = np.zeros((n, cin_p) + phases.shape[2:], np.int8)
        ph[:, :cin] = phases
        phases = ph
    planes = tap_planes(xi, g, phases)                         # [N, Cin_p, nph, plane]
    dyl = np.zeros((n, cout_p, g.oh, g.row), np.int8)          # padded-width layout, zero garbage cols
    dyl[:, :cout, :, :ow] = dy
    dyf = np.zeros((n, cout_p, g.ntiles * 128), np.int8)
    dyf[..., :g.npos] = dyl.reshape(n, cout_p, -1)
    dw = np.zeros((cout_p, cin_p, kh * kw), np.int64)
    for t, (phase, shift) in enumerate(g.taps()):
        prog = build_wgrad_tile(g, n, phase, shift)
        nco, nci = cout_p // CB, cin_p // IB
        st = HvxState(nco * nci, prog.mem_bytes)
        dyt = dyf.reshape(n, nco, CB, -1).transpose(1, 2, 0, 3).reshape(nco, -1)
        xt = planes.reshape(n, nci, IB, g.nphase, -1).transpose(1, 2, 0, 3, 4).reshape(nci, -1)
        st.write(prog.buffer("dY").offset, np.repeat(dyt, nci, axis=0))
        st.write(prog.buffer("X").offset, np.tile(xt, (nco, 1)))
        res = run(prog, st, config)
        total.add(res.timing, nco * nci)
        out = st.read(prog.buffer("dW").offset, 64, np.int32).reshape(nco, nci, CB, IB)
        dw[:, :, t] = out.transpose(0, 2, 1, 3).reshape(cout_p, cin_p)
    return dw[:cout, :cin].reshape(cout, cin, kh, kw), total
