"""HVX multiply instructions (A_CVI_VX / A_CVI_VX_DV): vrmpy, vdmpy, widening vmpy, vmpye/vmpyo.

Semantics follow QEMU ext.idef: products are formed at full precision and accumulations wrap
to the lane width unless the instruction saturates (fVSATW).  vrmpybus(_acc), the GEMM workhorse,
dispatches to the numba kernel in isa.hvx.fast when the tile batch is large enough.
"""
from __future__ import annotations

import numpy as np

from .. import fast
from ..lanes import b, h, i64, rt_bytes, rt_halves, sat, ub, uh, uw, w, wrap
from ..table import defop

# ---- vrmpy: 4-way reductions into words ------------------------------------------------------


def _rmpy_scalar(u, rt, usigned: bool, rsigned: bool):
    x = (ub(u) if not usigned else b(u)).reshape(-1, 32, 4).astype(np.int64)
    r = rt_bytes(rt, rsigned).astype(np.int64)
    return (x * r[:, None, :]).sum(axis=2)


def _rmpy_vector(u, v, usigned: bool, vsigned: bool):
    x = (b(u) if usigned else ub(u)).reshape(-1, 32, 4).astype(np.int64)
    y = (b(v) if vsigned else ub(v)).reshape(-1, 32, 4).astype(np.int64)
    return (x * y).sum(axis=2)


@defop("vrmpybus", "Q6_Vw_vrmpy_VubRb", "Vd32.w=vrmpy(Vu32.ub,Rt32.b)", "Vd,Vu,Rt", "VX", "vrmpy")
def vrmpybus(u, rt):
    return fast.vrmpybus(u, rt)


@defop("vrmpybus_acc", "Q6_Vw_vrmpyacc_VwVubRb", "Vx32.w+=vrmpy(Vu32.ub,Rt32.b)", "Vx,Vu,Rt", "VX", "vrmpy")
def vrmpybus_acc(x, u, rt):
    return fast.vrmpybus_acc(x, u, rt)


@defop("vrmpyub", "Q6_Vuw_vrmpy_VubRub", "Vd32.uw=vrmpy(Vu32.ub,Rt32.ub)", "Vd,Vu,Rt", "VX", "vrmpy")
def vrmpyub(u, rt):
    return wrap(_rmpy_scalar(u, rt, False, False), np.uint32)


@defop("vrmpyub_acc", "Q6_Vuw_vrmpyacc_VuwVubRub", "Vx32.uw+=vrmpy(Vu32.ub,Rt32.ub)", "Vx,Vu,Rt", "VX", "vrmpy")
def vrmpyub_acc(x, u, rt):
    return wrap(i64(uw(x)) + _rmpy_scalar(u, rt, False, False), np.uint32)


@defop("vrmpybv", "Q6_Vw_vrmpy_VbVb", "Vd32.w=vrmpy(Vu32.b,Vv32.b)", "Vd,Vu,Vv", "VX", "vrmpy")
def vrmpybv(u, v):
    return wrap(_rmpy_vector(u, v, True, True), np.int32)


@defop("vrmpybv_acc", "Q6_Vw_vrmpyacc_VwVbVb", "Vx32.w+=vrmpy(Vu32.b,Vv32.b)", "Vx,Vu,Vv", "VX_DV", "vrmpy")
def vrmpybv_acc(x, u, v):
    return wrap(i64(w(x)) + _rmpy_vector(u, v, True, True), np.int32)


@defop("vrmpyubv", "Q6_Vuw_vrmpy_VubVub", "Vd32.uw=vrmpy(Vu32.ub,Vv32.ub)", "Vd,Vu,Vv", "VX", "vrmpy")
def vrmpyubv(u, v):
    return wrap(_rmpy_vector(u, v, False, False), np.uint32)


@defop("vrmpyubv_acc", "Q6_Vuw_vrmpyacc_VuwVubVub", "Vx32.uw+=vrmpy(Vu32.ub,Vv32.ub)", "Vx,Vu,Vv", "VX_DV", "vrmpy")
def vrmpyubv_acc(x, u, v):
    return wrap(i64(uw(x)) + _rmpy_vector(u, v, False, False), np.uint32)


@defop("vrmpybusv", "Q6_Vw_vrmpy_VubVb", "Vd32.w=vrmpy(Vu32.ub,Vv32.b)", "Vd,Vu,Vv", "VX", "vrmpy")
def vrmpybusv(u, v):
    return wrap(_rmpy_vector(u, v, False, True), np.int32)


@defop("vrmpybusv_acc", "Q6_Vw_vrmpyacc_VwVubVb", "Vx32.w+=vrmpy(Vu32.ub,Vv32.b)", "Vx,Vu,Vv", "VX_DV", "vrmpy")
def vrmpybusv_acc(x, u, v):
    return wrap(i64(w(x)) + _rmpy_vector(u, v, False, True), np.int32)


# ---- vdmpy: 2-way reductions --------------------------------------------------------------------


def _dmpybus(u, rt):
    x = ub(u).astype(np.int64).reshape(-1, 128)
    r = np.tile(rt_bytes(rt, True).astype(np.int64), (1, 32))  # byte k multiplies Rt.b[k % 4]
    return (x * r).reshape(-1, 64, 2).sum(axis=2)


@defop("vdmpybus", "Q6_Vh_vdmpy_VubRb", "Vd32.h=vdmpy(Vu32.ub,Rt32.b)", "Vd,Vu,Rt", "VX", "vdmpy")
def vdmpybus(u, rt):
    return wrap(_dmpybus(u, rt), np.int16)


@defop("vdmpybus_acc", "Q6_Vh_vdmpyacc_VhVubRb", "Vx32.h+=vdmpy(Vu32.ub,Rt32.b)", "Vx,Vu,Rt", "VX", "vdmpy")
def vdmpybus_acc(x, u, rt):
    return wrap(i64(h(x)) + _dmpybus(u, rt), np.int16)


def _dmpyhb(u, rt):
    x = h(u).astype(np.int64)
    r = np.tile(rt_bytes(rt, True).astype(np.int64), (1, 16))  # halfword k multiplies Rt.b[k % 4]
    return (x * r).reshape(-1, 32, 2).sum(axis=2)


@defop("vdmpyhb", "Q6_Vw_vdmpy_VhRb", "Vd32.w=vdmpy(Vu32.h,Rt32.b)", "Vd,Vu,Rt", "VX", "vdmpy")
def vdmpyhb(u, rt):
    return wrap(_dmpyhb(u, rt), np.int32)


@defop("vdmpyhb_acc", "Q6_Vw_vdmpyacc_VwVhRb", "Vx32.w+=vdmpy(Vu32.h,Rt32.b)", "Vx,Vu,Rt", "VX", "vdmpy")
def vdmpyhb_acc(x, u, rt):
    return wrap(i64(w(x)) + _dmpyhb(u, rt), np.int32)


def _dmpyhv(u, v):
    return (i64(h(u)) * i64(h(v))).reshape(-1, 32, 2).sum(axis=2)


@defop("vdmpyhvsat", "Q6_Vw_vdmpy_VhVh_sat", "Vd32.w=vdmpy(Vu32.h,Vv32.h):sat", "Vd,Vu,Vv", "VX_DV", "vdmpy")
def vdmpyhvsat(u, v):
    return sat(_dmpyhv(u, v), np.int32)


@defop("vdmpyhvsat_acc", "Q6_Vw_vdmpyacc_VwVhVh_sat", "Vx32.w+=vdmpy(Vu32.h,Vv32.h):sat", "Vx,Vu,Vv", "VX_DV", "vdmpy")
def vdmpyhvsat_acc(x, u, v):
    return sat(i64(w(x)) + _dmpyhv(u, v), np.int32)


def _dmpyhrh(u, rt):
    return (i64(h(u)) * np.tile(rt_halves(rt, True).astype(np.int64), (1, 32))).reshape(-1, 32, 2).sum(axis=2)


@defop("vdmpyhsat", "Q6_Vw_vdmpy_VhRh_sat", "Vd32.w=vdmpy(Vu32.h,Rt32.h):sat", "Vd,Vu,Rt", "VX_DV", "vdmpy")
def vdmpyhsat(u, rt):
    return sat(_dmpyhrh(u, rt), np.int32)


@defop("vdmpyhsat_acc", "Q6_Vw_vdmpyacc_VwVhRh_sat", "Vx32.w+=vdmpy(Vu32.h,Rt32.h):sat", "Vx,Vu,Rt", "VX_DV", "vdmpy")
def vdmpyhsat_acc(x, u, rt):
    return sat(i64(w(x)) + _dmpyhrh(u, rt), np.int32)


# ---- widening vmpy: products of even/odd lanes into a register pair ------------------------------


def _pair(lo, hi):
    return np.stack([lo, hi], axis=1)


def _even_odd(a):
    return a[:, 0::2], a[:, 1::2]


def _mpy_bus_r(u, rt):
    e, o = _even_odd(i64(ub(u)))
    r = rt_bytes(rt, True).astype(np.int64)
    re = np.where(np.arange(64) % 2 == 0, r[:, 0:1], r[:, 2:3])  # (2i)%4 in {0,2}
    ro = np.where(np.arange(64) % 2 == 0, r[:, 1:2], r[:, 3:4])  # (2i+1)%4 in {1,3}
    return e * re, o * ro


@defop("vmpybus", "Q6_Wh_vmpy_VubRb", "Vdd32.h=vmpy(Vu32.ub,Rt32.b)", "Wd,Vu,Rt", "VX_DV", "vmpy")
def vmpybus(u, rt):
    e, o = _mpy_bus_r(u, rt)
    return _pair(wrap(e, np.int16), wrap(o, np.int16))


@defop("vmpybus_acc", "Q6_Wh_vmpyacc_WhVubRb", "Vxx32.h+=vmpy(Vu32.ub,Rt32.b)", "Wx,Vu,Rt", "VX_DV", "vmpy")
def vmpybus_acc(xx, u, rt):
    e, o = _mpy_bus_r(u, rt)
    return _pair(wrap(i64(h(xx[:, 0])) + e, np.int16), wrap(i64(h(xx[:, 1])) + o, np.int16))


def _vv(view_u, view_v, dt_out, name, intr, syn, fam="vmpy"):
    def f(u, v):
        eu, ou = _even_odd(i64(view_u(u)))
        ev, ov = _even_odd(i64(view_v(v)))
        return _pair(wrap(eu * ev, dt_out), wrap(ou * ov, dt_out))

    def facc(xx, u, v):
        eu, ou = _even_odd(i64(view_u(u)))
        ev, ov = _even_odd(i64(view_v(v)))
        vx = {np.int16: h, np.uint16: uh, np.int32: w, np.uint32: uw}[dt_out]
        return _pair(wrap(i64(vx(xx[:, 0])) + eu * ev, dt_out), wrap(i64(vx(xx[:, 1])) + ou * ov, dt_out))
    defop(name, intr[0], syn[0], "Wd,Vu,Vv", "VX_DV", fam)(f)
    defop(name + "_acc", intr[1], syn[1], "Wx,Vu,Vv", "VX_DV", fam)(facc)


_vv(ub, b, np.int16, "vmpybusv", ("Q6_Wh_vmpy_VubVb", "Q6_Wh_vmpyacc_WhVubVb"),
    ("Vdd32.h=vmpy(Vu32.ub,Vv32.b)", "Vxx32.h+=vmpy(Vu32.ub,Vv32.b)"))
_vv(b, b, np.int16, "vmpybv", ("Q6_Wh_vmpy_VbVb", "Q6_Wh_vmpyacc_WhVbVb"),
    ("Vdd32.h=vmpy(Vu32.b,Vv32.b)", "Vxx32.h+=vmpy(Vu32.b,Vv32.b)"))
_vv(ub, ub, np.uint16, "vmpyubv", ("Q6_Wuh_vmpy_VubVub", "Q6_Wuh_vmpyacc_WuhVubVub"),
    ("Vdd32.uh=vmpy(Vu32.ub,Vv32.ub)", "Vxx32.uh+=vmpy(Vu32.ub,Vv32.ub)"))
_vv(h, h, np.int32, "vmpyhv", ("Q6_Ww_vmpy_VhVh", "Q6_Ww_vmpyacc_WwVhVh"),
    ("Vdd32.w=vmpy(Vu32.h,Vv32.h)", "Vxx32.w+=vmpy(Vu32.h,Vv32.h)"))
_vv(uh, uh, np.uint32, "vmpyuhv", ("Q6_Wuw_vmpy_VuhVuh", "Q6_Wuw_vmpyacc_WuwVuhVuh"),
    ("Vdd32.uw=vmpy(Vu32.uh,Vv32.uh)", "Vxx32.uw+=vmpy(Vu32.uh,Vv32.uh)"))


def _mpy_h_rh(u, rt):
    e, o = _even_odd(i64(h(u)))
    r = rt_halves(rt, True).astype(np.int64)
    return e * r[:, 0:1], o * r[:, 1:2]


@defop("vmpyh", "Q6_Ww_vmpy_VhRh", "Vdd32.w=vmpy(Vu32.h,Rt32.h)", "Wd,Vu,Rt", "VX_DV", "vmpy")
def vmpyh(u, rt):
    e, o = _mpy_h_rh(u, rt)
    return _pair(wrap(e, np.int32), wrap(o, np.int32))


@defop("vmpyh_acc", "Q6_Ww_vmpyacc_WwVhRh", "Vxx32.w+=vmpy(Vu32.h,Rt32.h)", "Wx,Vu,Rt", "VX_DV", "vmpy")
def vmpyh_acc(xx, u, rt):
    e, o = _mpy_h_rh(u, rt)
    return _pair(wrap(i64(w(xx[:, 0])) + e, np.int32), wrap(i64(w(xx[:, 1])) + o, np.int32))


@defop("vmpyhsat_acc", "Q6_Ww_vmpyacc_WwVhRh_sat", "Vxx32.w+=vmpy(Vu32.h,Rt32.h):sat", "Wx,Vu,Rt", "VX_DV", "vmpy")
def vmpyhsat_acc(xx, u, rt):
    e, o = _mpy_h_rh(u, rt)
    return _pair(sat(i64(w(xx[:, 0])) + e, np.int32), sat(i64(w(xx[:, 1])) + o, np.int32))


# ---- vmpye / vmpyo: 32x16 multiplies used to build 32x32 requantisation multiplies -------------

def _uh_even(v):
    return i64(uh(v))[:, 0::2]


def _h_odd(v):
    return i64(h(v))[:, 1::2]


def _h_even(v):
    return i64(h(v))[:, 0::2]


@defop("vmpyewuh", "Q6_Vw_vmpye_VwVuh", "Vd32.w=vmpye(Vu32.w,Vv32.uh)", "Vd,Vu,Vv", "VX_DV", "vmpye/vmpyo")
def vmpyewuh(u, v):
    return wrap((i64(w(u)) * _uh_even(v)) >> 16, np.int32)


@defop("vmpyowh", "Q6_Vw_vmpyo_VwVh_s1_sat", "Vd32.w=vmpyo(Vu32.w,Vv32.h):<<1:sat", "Vd,Vu,Vv", "VX_DV", "vmpye/vmpyo")
def vmpyowh(u, v):
    return sat(((i64(w(u)) * _h_odd(v)) >> 14) >> 1, np.int32)


@defop("vmpyowh_rnd", "Q6_Vw_vmpyo_VwVh_s1_rnd_sat", "Vd32.w=vmpyo(Vu32.w,Vv32.h):<<1:rnd:sat", "Vd,Vu,Vv",
       "VX_DV", "vmpye/vmpyo")
def vmpyowh_rnd(u, v):
    return sat((((i64(w(u)) * _h_odd(v)) >> 14) + 1) >> 1, np.int32)


@defop("vmpyowh_sacc", "Q6_Vw_vmpyoacc_VwVwVh_s1_sat_shift", "Vx32.w+=vmpyo(Vu32.w,Vv32.h):<<1:sat:shift",
       "Vx,Vu,Vv", "VX_DV", "vmpye/vmpyo")
def vmpyowh_sacc(x, u, v):
    return sat(((i64(w(x)) + i64(w(u)) * _h_odd(v)) >> 14) >> 1, np.int32)


@defop("vmpyowh_rnd_sacc", "Q6_Vw_vmpyoacc_VwVwVh_s1_rnd_sat_shift",
       "Vx32.w+=vmpyo(Vu32.w,Vv32.h):<<1:rnd:sat:shift", "Vx,Vu,Vv", "VX_DV", "vmpye/vmpyo")
def vmpyowh_rnd_sacc(x, u, v):
    return sat((((i64(w(x)) + i64(w(u)) * _h_odd(v)) >> 14) + 1) >> 1, np.int32)


@defop("vmpyiewuh", "Q6_Vw_vmpyie_VwVuh", "Vd32.w=vmpyie(Vu32.w,Vv32.uh)", "Vd,Vu,Vv", "VX_DV", "vmpye/vmpyo")
def vmpyiewuh(u, v):
    return wrap(i64(w(u)) * _uh_even(v), np.int32)


@defop("vmpyiewuh_acc", "Q6_Vw_vmpyieacc_VwVwVuh", "Vx32.w+=vmpyie(Vu32.w,Vv32.uh)", "Vx,Vu,Vv", "VX_DV", "vmpye/vmpyo")
def vmpyiewuh_acc(x, u, v):
    return wrap(i64(w(x)) + i64(w(u)) * _uh_even(v), np.int32)


@defop("vmpyiewh_acc", "Q6_Vw_vmpyieacc_VwVwVh", "Vx32.w+=vmpyie(Vu32.w,Vv32.h)", "Vx,Vu,Vv", "VX_DV", "vmpye/vmpyo")
def vmpyiewh_acc(x, u, v):
    return wrap(i64(w(x)) + i64(w(u)) * _h_even(v), np.int32)


@defop("vmpyiowh", "Q6_Vw_vmpyio_VwVh", "Vd32.w=vmpyio(Vu32.w,Vv32.h)", "Vd,Vu,Vv", "VX_DV", "vmpye/vmpyo")
def vmpyiowh(u, v):
    return wrap(i64(w(u)) * _h_odd(v), np.int32)


@defop("vmpyieoh", "Q6_Vw_vmpyieo_VhVh", "Vd32.w=vmpyieo(Vu32.h,Vv32.h)", "Vd,Vu,Vv", "VX", "vmpye/vmpyo")
def vmpyieoh(u, v):
    return wrap((_h_even(u) * _h_odd(v)) << 16, np.int32)


@defop("vmpyiwb", "Q6_Vw_vmpyi_VwRb", "Vd32.w=vmpyi(Vu32.w,Rt32.b)", "Vd,Vu,Rt", "VX", "vmpy")
def vmpyiwb(u, rt):
    r = np.tile(rt_bytes(rt, True).astype(np.int64), (1, 8))
    return wrap(i64(w(u)) * r, np.int32)


@defop("vmpyiwb_acc", "Q6_Vw_vmpyiacc_VwVwRb", "Vx32.w+=vmpyi(Vu32.w,Rt32.b)", "Vx,Vu,Rt", "VX", "vmpy")
def vmpyiwb_acc(x, u, rt):
    r = np.tile(rt_bytes(rt, True).astype(np.int64), (1, 8))
    return wrap(i64(w(x)) + i64(w(u)) * r, np.int32)
