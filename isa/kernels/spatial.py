"""Shared HVX program: the stride-2 phase split (space-to-depth of one padded plane).

Each pair of padded input rows is read as 256-byte chunks (two vmemu loads); vpacke/vpacko pick
the even and odd columns, and four unaligned stores write them to the four phase planes.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from isa.hvx import Builder, HvxState, Program, R, V, run
from isa.hvx.timing import TimingConfig

from .layout import Geometry, rup


@lru_cache(maxsize=64)
def build_phase_split(hp: int, wp: int) -> Program:
    wh = rup(wp, 2) // 2
    chunks = -(-wp // 256)
    plane_out = rup((hp // 2) * wh + 128 * chunks, 128)
    b = Builder(f"phase_split_{hp}x{wp}")
    src = b.buffer("plane", rup(hp * wp + 256 * chunks, 128))
    dst = b.buffer("phases", 4 * plane_out)
    b.A2_tfrsi(R(1), src)
    for k in range(4):
        b.A2_tfrsi(R(2 + k), dst + k * plane_out)
    with b.loop(hp // 2):
        for half in (0, 1):                      # row 2i -> phases 0/1, row 2i+1 -> phases 2/3
            for c in range(chunks):
                b.A2_addi(R(8), R(1), half * wp + 256 * c)
                b.vL32Ub_ai(V(0), R(8), 0, buf="plane")
                b.vL32Ub_ai(V(1), R(8), 1, buf="plane")
                b.vpackeb(V(2), V(1), V(0))
                b.vpackob(V(3), V(1), V(0))
                b.A2_addi(R(9), R(2 + 2 * half), 128 * c)
                b.A2_addi(R(10), R(3 + 2 * half), 128 * c)
                b.vS32Ub_ai(R(9), 0, V(2), buf="phases")
                b.vS32Ub_ai(R(10), 0, V(3), buf="phases")
        b.A2_addi(R(1), R(1), 2 * wp)
        for k in range(4):
            b.A2_addi(R(2 + k), R(2 + k), wh)
    return b.build()


def phase_split_hvx(xp: np.ndarray, g: Geometry, config: TimingConfig = TimingConfig()):
    """[N, C, hp, wp] padded planes -> phase planes [N, C, 4, hp/2, wh] on the emulator."""
    n, c, hp, wp = xp.shape
    prog = build_phase_split(hp, wp)
    wh = rup(wp, 2) // 2
    st = HvxState(n * c, prog.mem_bytes)
    st.write(prog.buffer("plane").offset, xp.reshape(n * c, hp * wp))
    res = run(prog, st, config)
    ph = prog.buffer("phases")
    plane_out = ph.size // 4
    out = st.read(ph.offset, ph.size, np.int8).reshape(n, c, 4, plane_out)[..., :(hp // 2) * wh]
    return out.reshape(n, c, 4, hp // 2, wh), res.timing.scaled(n * c)
