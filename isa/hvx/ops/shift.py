"""HVX shift-unit (A_CVI_VS) instructions: vasl/vasr/vlsr, narrowing vasr with rnd/sat, vcl0,
vnormamt, vsat.  Shift amounts are masked exactly as ext.idef does (Rt & (width-1) for the
element shifts, Rt & 0xF / & 0x7 for the narrowing shifts), so amounts at and past the lane
width wrap rather than clear the lane.
"""
from __future__ import annotations

import numpy as np

from ..lanes import (bidir_shift_left, bidir_shift_right, clz, h, i64, rt_u32, sxtn,
                     to_bytes, ub, uh, uw, w, wrap)
from ..table import defop

_V = {"w": (w, uw, np.int32, np.uint32, 32, "Vw", "Vuw"), "h": (h, uh, np.int16, np.uint16, 16, "Vh", "Vuh")}


def _amt(rt, width):
    return (rt_u32(rt) & (width - 1)).astype(np.int64)[:, None]


for _t, (_sv, _uv, _sdt, _udt, _wd, _q, _qu) in _V.items():
    def _mk(sv=_sv, uv=_uv, sdt=_sdt, udt=_udt, wd=_wd):
        def asl(u, rt):
            return wrap(i64(sv(u)) << _amt(rt, wd), sdt)

        def asr(u, rt):
            return wrap(i64(sv(u)) >> _amt(rt, wd), sdt)

        def lsr(u, rt):
            return wrap(i64(uv(u)) >> _amt(rt, wd), udt)

        def aslv(u, v):
            return wrap(bidir_shift_left(i64(sv(u)), sxtn(sv(v), wd.bit_length()), wd, True), sdt)

        def asrv(u, v):
            return wrap(bidir_shift_right(i64(sv(u)), sxtn(sv(v), wd.bit_length()), wd, True), sdt)

        def lsrv(u, v):
            return wrap(bidir_shift_right(i64(uv(u)), sxtn(sv(v), wd.bit_length()), wd, False), udt)

        def asl_acc(x, u, rt):
            return wrap(i64(sv(x)) + (i64(sv(u)) << _amt(rt, wd)), sdt)

        def asr_acc(x, u, rt):
            return wrap(i64(sv(x)) + (i64(sv(u)) >> _amt(rt, wd)), sdt)
        return asl, asr, lsr, aslv, asrv, lsrv, asl_acc, asr_acc
    _asl, _asr, _lsr, _aslv, _asrv, _lsrv, _asl_acc, _asr_acc = _mk()
    defop(f"vasl{_t}", f"Q6_{_q}_vasl_{_q}R", f"Vd32.{_t}=vasl(Vu32.{_t},Rt32)", "Vd,Vu,Rt", "VS", "vasl/vlsr")(_asl)
    defop(f"vasr{_t}", f"Q6_{_q}_vasr_{_q}R", f"Vd32.{_t}=vasr(Vu32.{_t},Rt32)", "Vd,Vu,Rt", "VS", "vasl/vlsr")(_asr)
    defop(f"vlsr{_t}", f"Q6_{_qu}_vlsr_{_qu}R", f"Vd32.u{_t}=vlsr(Vu32.u{_t},Rt32)", "Vd,Vu,Rt", "VS", "vasl/vlsr")(_lsr)
    defop(f"vasl{_t}v", f"Q6_{_q}_vasl_{_q}{_q}", f"Vd32.{_t}=vasl(Vu32.{_t},Vv32.{_t})", "Vd,Vu,Vv", "VS", "vasl/vlsr")(_aslv)
    defop(f"vasr{_t}v", f"Q6_{_q}_vasr_{_q}{_q}", f"Vd32.{_t}=vasr(Vu32.{_t},Vv32.{_t})", "Vd,Vu,Vv", "VS", "vasl/vlsr")(_asrv)
    defop(f"vlsr{_t}v", f"Q6_{_q}_vlsr_{_q}{_q}", f"Vd32.u{_t}=vlsr(Vu32.u{_t},Vv32.{_t})", "Vd,Vu,Vv", "VS", "vasl/vlsr")(_lsrv)
    if _t == "w":
        defop("vaslw_acc", "Q6_Vw_vaslacc_VwVwR", "Vx32.w+=vasl(Vu32.w,Rt32)", "Vx,Vu,Rt", "VS", "vasl/vlsr")(_asl_acc)
        defop("vasrw_acc", "Q6_Vw_vasracc_VwVwR", "Vx32.w+=vasr(Vu32.w,Rt32)", "Vx,Vu,Rt", "VS", "vasl/vlsr")(_asr_acc)


@defop("vlsrb", "Q6_Vub_vlsr_VubR", "Vd32.ub=vlsr(Vu32.ub,Rt32)", "Vd,Vu,Rt", "VS", "vasl/vlsr")
def vlsrb(u, rt):
    return wrap(i64(ub(u)) >> _amt(rt, 8), np.uint8)


# ---- narrowing shifts: even output lanes from Vv, odd from Vu (ext.idef NARROWING_SHIFT) -----

def _narrow(src_view, dst_dt, mask, rnd, saturate):
    def f(u, v, rt):
        sh = (rt_u32(rt) & mask).astype(np.int64)[:, None]
        out = []
        for x in (v, u):
            val = i64(src_view(x))
            if rnd:
                val = val + np.where(sh > 0, np.left_shift(1, np.maximum(sh - 1, 0)), 0)
            val = val >> sh
            info = np.iinfo(dst_dt)
            val = np.clip(val, info.min, info.max) if saturate else val
            out.append(val.astype(dst_dt))
        d = np.empty((u.shape[0], out[0].shape[1] * 2), dst_dt)
        d[:, 0::2], d[:, 1::2] = out
        return to_bytes(d)
    return f


for _nm, _sv, _dt, _mask, _rnd, _sat, _intr, _syn in (
    ("vasrwh", w, np.int16, 0xF, False, False, "Q6_Vh_vasr_VwVwR", "Vd32.h=vasr(Vu32.w,Vv32.w,Rt8)"),
    ("vasrwhsat", w, np.int16, 0xF, False, True, "Q6_Vh_vasr_VwVwR_sat", "Vd32.h=vasr(Vu32.w,Vv32.w,Rt8):sat"),
    ("vasrwhrndsat", w, np.int16, 0xF, True, True, "Q6_Vh_vasr_VwVwR_rnd_sat", "Vd32.h=vasr(Vu32.w,Vv32.w,Rt8):rnd:sat"),
    ("vasrwuhsat", w, np.uint16, 0xF, False, True, "Q6_Vuh_vasr_VwVwR_sat", "Vd32.uh=vasr(Vu32.w,Vv32.w,Rt8):sat"),
    ("vasrwuhrndsat", w, np.uint16, 0xF, True, True, "Q6_Vuh_vasr_VwVwR_rnd_sat",
     "Vd32.uh=vasr(Vu32.w,Vv32.w,Rt8):rnd:sat"),
    ("vasruwuhrndsat", uw, np.uint16, 0xF, True, True, "Q6_Vuh_vasr_VuwVuwR_rnd_sat",
     "Vd32.uh=vasr(Vu32.uw,Vv32.uw,Rt8):rnd:sat"),
    ("vasrhubsat", h, np.uint8, 0x7, False, True, "Q6_Vub_vasr_VhVhR_sat", "Vd32.ub=vasr(Vu32.h,Vv32.h,Rt8):sat"),
    ("vasrhubrndsat", h, np.uint8, 0x7, True, True, "Q6_Vub_vasr_VhVhR_rnd_sat", "Vd32.ub=vasr(Vu32.h,Vv32.h,Rt8):rnd:sat"),
    ("vasrhbsat", h, np.int8, 0x7, False, True, "Q6_Vb_vasr_VhVhR_sat", "Vd32.b=vasr(Vu32.h,Vv32.h,Rt8):sat"),
    ("vasrhbrndsat", h, np.int8, 0x7, True, True, "Q6_Vb_vasr_VhVhR_rnd_sat", "Vd32.b=vasr(Vu32.h,Vv32.h,Rt8):rnd:sat"),
):
    defop(_nm, _intr, _syn, "Vd,Vu,Vv,Rt", "VS", "vasr-narrow")(_narrow(_sv, _dt, _mask, _rnd, _sat))


# ---- saturate and interleave (ext.idef lists vsathub/vsatwh in the any-slot ALU group) -----

@defop("vsathub", "Q6_Vub_vsat_VhVh", "Vd32.ub=vsat(Vu32.h,Vv32.h)", "Vd,Vu,Vv", "VA", "vsat")
def vsathub(u, v):
    d = np.empty((u.shape[0], 128), np.uint8)
    d[:, 0::2] = np.clip(h(v), 0, 255)
    d[:, 1::2] = np.clip(h(u), 0, 255)
    return d


@defop("vsatwh", "Q6_Vh_vsat_VwVw", "Vd32.h=vsat(Vu32.w,Vv32.w)", "Vd,Vu,Vv", "VA", "vsat")
def vsatwh(u, v):
    d = np.empty((u.shape[0], 64), np.int16)
    d[:, 0::2] = np.clip(w(v), -32768, 32767)
    d[:, 1::2] = np.clip(w(u), -32768, 32767)
    return to_bytes(d)


# ---- count leading bits ----------------------------------------------------------------------

@defop("vcl0w", "Q6_Vuw_vcl0_Vuw", "Vd32.uw=vcl0(Vu32.uw)", "Vd,Vu", "VS", "vcl0/vnormamt")
def vcl0w(u):
    return wrap(clz(uw(u), 32), np.uint32)


@defop("vcl0h", "Q6_Vuh_vcl0_Vuh", "Vd32.uh=vcl0(Vu32.uh)", "Vd,Vu", "VS", "vcl0/vnormamt")
def vcl0h(u):
    return wrap(clz(uh(u), 16), np.uint16)


@defop("vnormamtw", "Q6_Vw_vnormamt_Vw", "Vd32.w=vnormamt(Vu32.w)", "Vd,Vu", "VS", "vcl0/vnormamt")
def vnormamtw(u):
    x = uw(u)
    return wrap(np.maximum(clz(x, 32), clz(~x, 32)) - 1, np.int32)


@defop("vnormamth", "Q6_Vh_vnormamt_Vh", "Vd32.h=vnormamt(Vu32.h)", "Vd,Vu", "VS", "vcl0/vnormamt")
def vnormamth(u):
    x = uh(u)
    return wrap(np.maximum(clz(x, 16), clz(~x, 16)) - 1, np.int16)

