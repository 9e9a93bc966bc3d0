"""HVX permute-unit (A_CVI_VP, A_CVI_VP_VS) instructions: vpack, vshuff/vdeal (single and pair
forms), valign/vlalign, vror."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..lanes import h, rt_u32, to_bytes, ub, uh, uw, w
from ..table import defop


def _packer(view, lanes_dt, take, clip=None):
    def f(u, v):
        parts = []
        for x in (v, u):
            a = view(x)
            if clip is not None:
                a = np.clip(a, *clip).astype(lanes_dt)
            else:
                a = take(a)
            parts.append(np.asarray(a).astype(lanes_dt))
        return to_bytes(np.concatenate(parts, axis=1))
    return f


def _lo8(a):
    return (a & 0xFF).astype(np.uint8)


def _hi8(a):
    return (a >> 8).astype(np.uint8)


def _lo16(a):
    return (a & 0xFFFF).astype(np.uint16)


def _hi16(a):
    return (a >> 16).astype(np.uint16)


for _nm, _view, _dt, _take, _clip, _intr, _syn in (
    ("vpackeb", uh, np.uint8, _lo8, None, "Q6_Vb_vpacke_VhVh", "Vd32.b=vpacke(Vu32.h,Vv32.h)"),
    ("vpackob", uh, np.uint8, _hi8, None, "Q6_Vb_vpacko_VhVh", "Vd32.b=vpacko(Vu32.h,Vv32.h)"),
    ("vpackeh", uw, np.uint16, _lo16, None, "Q6_Vh_vpacke_VwVw", "Vd32.h=vpacke(Vu32.w,Vv32.w)"),
    ("vpackoh", uw, np.uint16, _hi16, None, "Q6_Vh_vpacko_VwVw", "Vd32.h=vpacko(Vu32.w,Vv32.w)"),
    ("vpackhub_sat", h, np.uint8, None, (0, 255), "Q6_Vub_vpack_VhVh_sat", "Vd32.ub=vpack(Vu32.h,Vv32.h):sat"),
    ("vpackhb_sat", h, np.int8, None, (-128, 127), "Q6_Vb_vpack_VhVh_sat", "Vd32.b=vpack(Vu32.h,Vv32.h):sat"),
    ("vpackwuh_sat", w, np.uint16, None, (0, 65535), "Q6_Vuh_vpack_VwVw_sat", "Vd32.uh=vpack(Vu32.w,Vv32.w):sat"),
    ("vpackwh_sat", w, np.int16, None, (-32768, 32767), "Q6_Vh_vpack_VwVw_sat", "Vd32.h=vpack(Vu32.w,Vv32.w):sat"),
):
    defop(_nm, _intr, _syn, "Vd,Vu,Vv", "VP", "vpack")(_packer(_view, _dt, _take, _clip))


# ---- single-vector shuffle / deal -----------------------------------------------------------

@defop("vshuffb", "Q6_Vb_vshuff_Vb", "Vd32.b=vshuff(Vu32.b)", "Vd,Vu", "VP", "vshuff/vdeal")
def vshuffb(u):
    d = np.empty_like(ub(u))
    d[:, 0::2], d[:, 1::2] = ub(u)[:, :64], ub(u)[:, 64:]
    return d


@defop("vshuffh", "Q6_Vh_vshuff_Vh", "Vd32.h=vshuff(Vu32.h)", "Vd,Vu", "VP", "vshuff/vdeal")
def vshuffh(u):
    d = np.empty_like(uh(u))
    d[:, 0::2], d[:, 1::2] = uh(u)[:, :32], uh(u)[:, 32:]
    return to_bytes(d)


@defop("vdealb", "Q6_Vb_vdeal_Vb", "Vd32.b=vdeal(Vu32.b)", "Vd,Vu", "VP", "vshuff/vdeal")
def vdealb(u):
    return np.concatenate([ub(u)[:, 0::2], ub(u)[:, 1::2]], axis=1)


@defop("vdealh", "Q6_Vh_vdeal_Vh", "Vd32.h=vdeal(Vu32.h)", "Vd,Vu", "VP", "vshuff/vdeal")
def vdealh(u):
    return to_bytes(np.concatenate([uh(u)[:, 0::2], uh(u)[:, 1::2]], axis=1))


@defop("vdealb4w", "Q6_Vb_vdeale_VbVb", "Vd32.b=vdeale(Vu32.b,Vv32.b)", "Vd,Vu,Vv", "VP", "vshuff/vdeal")
def vdealb4w(u, v):
    return np.concatenate([ub(v)[:, 0::4], ub(v)[:, 2::4], ub(u)[:, 0::4], ub(u)[:, 2::4]], axis=1)


# ---- in-lane even/odd shuffles (ext.idef: any-slot ALU) -------------------------------------

def _shuff_eo(view, lanes_dt, parity):
    def f(u, v):
        a, c = view(v), view(u)
        d = np.empty_like(a)
        d[:, 0::2] = a[:, parity::2]
        d[:, 1::2] = c[:, parity::2]
        return to_bytes(d)
    return f


defop("vshuffeb", "Q6_Vb_vshuffe_VbVb", "Vd32.b=vshuffe(Vu32.b,Vv32.b)", "Vd,Vu,Vv", "VA", "vshuff/vdeal")(
    _shuff_eo(ub, np.uint8, 0))
defop("vshuffob", "Q6_Vb_vshuffo_VbVb", "Vd32.b=vshuffo(Vu32.b,Vv32.b)", "Vd,Vu,Vv", "VA", "vshuff/vdeal")(
    _shuff_eo(ub, np.uint8, 1))
defop("vshufeh", "Q6_Vh_vshuffe_VhVh", "Vd32.h=vshuffe(Vu32.h,Vv32.h)", "Vd,Vu,Vv", "VA", "vshuff/vdeal")(
    _shuff_eo(uh, np.uint16, 0))
defop("vshufoh", "Q6_Vh_vshuffo_VhVh", "Vd32.h=vshuffo(Vu32.h,Vv32.h)", "Vd,Vu,Vv", "VA", "vshuff/vdeal")(
    _shuff_eo(uh, np.uint16, 1))


@defop("vshufoeh", "Q6_Wh_vshuffoe_VhVh", "Vdd32.h=vshuffoe(Vu32.h,Vv32.h)", "Wd,Vu,Vv", "VA_DV", "vshuff/vdeal")
def vshufoeh(u, v):
    return np.stack([_shuff_eo(uh, np.uint16, 0)(u, v), _shuff_eo(uh, np.uint16, 1)(u, v)], axis=1)


@defop("vshufoeb", "Q6_Wb_vshuffoe_VbVb", "Vdd32.b=vshuffoe(Vu32.b,Vv32.b)", "Wd,Vu,Vv", "VA_DV", "vshuff/vdeal")
def vshufoeb(u, v):
    return np.stack([_shuff_eo(ub, np.uint8, 0)(u, v), _shuff_eo(ub, np.uint8, 1)(u, v)], axis=1)


# ---- two-vector shuffle / deal network (ext.idef V6_vshuffvdd / V6_vdealvdd) ---------------

@lru_cache(maxsize=512)
def _network_perm(rt: int, offsets: tuple) -> np.ndarray:
    """Source index (into v||u, 256 bytes) of each output byte (lo||hi) for one Rt value."""
    lo = list(range(128))            # VddV.v[0] starts as Vv (indices 0..127)
    hi = list(range(128, 256))       # VddV.v[1] starts as Vu
    for off in offsets:
        if rt & off:
            for k in range(128):
                if not k & off:
                    hi[k], lo[k + off] = lo[k + off], hi[k]
    return np.array(lo + hi, np.int64)


def _swap_network(u, v, rt, offsets):
    cat = np.concatenate([ub(v), ub(u)], axis=1)
    r = (rt_u32(rt) & 127).astype(np.int64)
    if r.size and (r == r.flat[0]).all():      # the usual case: every tile passes the same Rt
        return cat[:, _network_perm(int(r.flat[0]), offsets)].reshape(-1, 2, 128)
    out = np.empty_like(cat)
    for val in np.unique(r):
        sel = r == val
        perm = _network_perm(int(val), offsets)
        out[sel] = cat[sel][:, perm] if not sel.all() else cat[:, perm]
    return out.reshape(-1, 2, 128)


@defop("vshuffvdd", "Q6_W_vshuff_VVR", "Vdd32=vshuff(Vu32,Vv32,Rt8)", "Wd,Vu,Vv,Rt", "VP_VS", "vshuff/vdeal")
def vshuffvdd(u, v, rt):
    return _swap_network(u, v, rt, (1, 2, 4, 8, 16, 32, 64))


@defop("vdealvdd", "Q6_W_vdeal_VVR", "Vdd32=vdeal(Vu32,Vv32,Rt8)", "Wd,Vu,Vv,Rt", "VP_VS", "vshuff/vdeal")
def vdealvdd(u, v, rt):
    return _swap_network(u, v, rt, (64, 32, 16, 8, 4, 2, 1))


# ---- alignment -------------------------------------------------------------------------------

def _align(u, v, shift):
    cat = np.concatenate([ub(v), ub(u), ub(u)[:, :1]], axis=1)  # d[i] = (i+s<128) ? v[i+s] : u[i+s-128]
    idx = np.arange(128)[None, :] + np.asarray(shift, dtype=np.int64).reshape(-1, 1)
    return np.take_along_axis(cat, idx, axis=1)


@defop("valignb", "Q6_V_valign_VVR", "Vd32=valign(Vu32,Vv32,Rt8)", "Vd,Vu,Vv,Rt", "VP", "valign")
def valignb(u, v, rt):
    return _align(u, v, (rt_u32(rt) & 127).astype(np.int64))


@defop("vlalignb", "Q6_V_vlalign_VVR", "Vd32=vlalign(Vu32,Vv32,Rt8)", "Vd,Vu,Vv,Rt", "VP", "valign")
def vlalignb(u, v, rt):
    return _align(u, v, 128 - (rt_u32(rt) & 127).astype(np.int64))


@defop("valignbi", "Q6_V_valign_VVI", "Vd32=valign(Vu32,Vv32,#u3)", "Vd,Vu,Vv,I", "VP", "valign")
def valignbi(u, v, imm):
    return _align(u, v, np.full(u.shape[0], imm & 7, np.int64))


@defop("vlalignbi", "Q6_V_vlalign_VVI", "Vd32=vlalign(Vu32,Vv32,#u3)", "Vd,Vu,Vv,I", "VP", "valign")
def vlalignbi(u, v, imm):
    return _align(u, v, np.full(u.shape[0], 128 - (imm & 7), np.int64))


@defop("vror", "Q6_V_vror_VR", "Vd32=vror(Vu32,Rt32)", "Vd,Vu,Rt", "VP", "valign")
def vror(u, rt):
    idx = (np.arange(128)[None, :] + rt_u32(rt).astype(np.int64)[:, None]) & 127
    return np.take_along_axis(ub(u), idx, axis=1)
