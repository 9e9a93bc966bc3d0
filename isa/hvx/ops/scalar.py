"""The scalar (V66 core) instructions kernels need for address arithmetic and scale computation.

Values are int64 columns [tiles] holding 32-bit two's-complement numbers; results wrap to 32 bits.
"""
from __future__ import annotations

import numpy as np

from ..lanes import clz, rt_u32, sxtn
from ..table import SOURCE_SCALAR, defop


def s32(a) -> np.ndarray:
    """Wrap to a signed 32-bit value held in int64."""
    return ((np.asarray(a, dtype=np.int64) + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _d(name, syntax, ops, res="S_ALU"):
    return defop(name, "", syntax, ops, res, "scalar", SOURCE_SCALAR)


@_d("A2_tfrsi", "Rd32=#s16", "Rd,I")
def tfrsi(imm):
    return s32(np.array([imm]))   # broadcasts over the tile axis


@_d("A2_tfr", "Rd32=Rs32", "Rd,Rs")
def tfr(rs):
    return rs.copy()


@_d("A2_addi", "Rd32=add(Rs32,#s16)", "Rd,Rs,I")
def addi(rs, imm):
    return s32(rs + imm)


@_d("A2_add", "Rd32=add(Rs32,Rt32)", "Rd,Rs,Rt")
def add(rs, rt):
    return s32(rs + rt)


@_d("A2_sub", "Rd32=sub(Rt32,Rs32)", "Rd,Rt,Rs")
def sub(rt, rs):
    return s32(rt - rs)


@_d("A2_max", "Rd32=max(Rs32,Rt32)", "Rd,Rs,Rt")
def smax(rs, rt):
    return np.maximum(rs, rt)


@_d("A2_min", "Rd32=min(Rs32,Rt32)", "Rd,Rs,Rt")
def smin(rs, rt):
    return np.minimum(rs, rt)


@_d("A2_and", "Rd32=and(Rs32,Rt32)", "Rd,Rs,Rt")
def sand(rs, rt):
    return s32(rs & rt)


@_d("A2_or", "Rd32=or(Rs32,Rt32)", "Rd,Rs,Rt")
def sor(rs, rt):
    return s32(rs | rt)


@_d("S2_asl_i_r", "Rd32=asl(Rs32,#u5)", "Rd,Rs,I")
def asl_i(rs, imm):
    return s32(rs << (imm & 31))


@_d("S2_asr_i_r", "Rd32=asr(Rs32,#u5)", "Rd,Rs,I")
def asr_i(rs, imm):
    return s32(rs >> (imm & 31))


@_d("S2_lsr_i_r", "Rd32=lsr(Rs32,#u5)", "Rd,Rs,I")
def lsr_i(rs, imm):
    return s32(rt_u32(rs).astype(np.int64) >> (imm & 31))


def _bidir(x, rt, left_first):
    """Register shifts take a signed 7-bit amount; a negative amount shifts the other way."""
    sh = sxtn(rt, 7)
    pos, neg = np.clip(sh, 0, 63), np.clip(-sh, 0, 63)
    if left_first:   # asl: left by sh, or right (arithmetic) by -sh
        return s32(np.where(sh >= 0, np.left_shift(x, pos), np.right_shift(x, neg)))
    return s32(np.where(sh >= 0, np.right_shift(x, pos), np.left_shift(x, neg)))  # lsr


@_d("S2_asl_r_r", "Rd32=asl(Rs32,Rt32)", "Rd,Rs,Rt")
def asl_r(rs, rt):
    return _bidir(np.asarray(rs, np.int64), rt, True)


@_d("S2_lsr_r_r", "Rd32=lsr(Rs32,Rt32)", "Rd,Rs,Rt")
def lsr_r(rs, rt):
    return _bidir(rt_u32(rs).astype(np.int64), rt, False)


@_d("S2_cl0", "Rd32=cl0(Rs32)", "Rd,Rs")
def cl0(rs):
    return clz(rt_u32(rs), 32)


@_d("M2_mpyi", "Rd32=mpyi(Rs32,Rt32)", "Rd,Rs,Rt", "S_MPY")
def mpyi(rs, rt):
    return s32(rs * rt)


@defop("J2_loop0i", "", "loop0(#r7:2,#U10)", "I", "S_CR", "scalar", SOURCE_SCALAR)
def loop0i(count):
    """Hardware-loop setup: no data effect; the executor runs the loop body ``count`` times."""
    return None
