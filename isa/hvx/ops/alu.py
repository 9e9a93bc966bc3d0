"""HVX ALU (A_CVI_VA) instructions: add/sub, max/min, logic, compares, vmux, splat, moves."""
from __future__ import annotations

import numpy as np

from ..lanes import b, h, i64, rt_bytes, rt_u32, sat, to_bytes, ub, uh, uw, w, wrap
from ..table import defop

_T = {"b": (b, np.int8), "ub": (ub, np.uint8), "h": (h, np.int16), "uh": (uh, np.uint16),
      "w": (w, np.int32), "uw": (uw, np.uint32)}
_Q6 = {"b": "Vb", "ub": "Vub", "h": "Vh", "uh": "Vuh", "w": "Vw", "uw": "Vuw"}
_W6 = {"b": "Wb", "ub": "Wub", "h": "Wh", "uh": "Wuh", "w": "Ww", "uw": "Wuw"}


def _binop(t: str, op, saturate: bool):
    view, dt = _T[t]

    def f(u, v):
        r = op(i64(view(u)), i64(view(v)))
        return sat(r, dt) if saturate else wrap(r, dt)
    return f


def _pairop(f1):
    def f(uu, vv):
        return np.stack([f1(uu[:, 0], vv[:, 0]), f1(uu[:, 1], vv[:, 1])], axis=1)
    return f


for _t in ("b", "h", "w"):
    for _nm, _op in (("add", np.add), ("sub", np.subtract)):
        _f = _binop(_t, _op, False)
        defop(f"v{_nm}{_t}", f"Q6_{_Q6[_t]}_v{_nm}_{_Q6[_t]}{_Q6[_t]}", f"Vd32.{_t}=v{_nm}(Vu32.{_t},Vv32.{_t})",
              "Vd,Vu,Vv", "VA", "vadd/vsub")(_f)
        defop(f"v{_nm}{_t}_dv", f"Q6_{_W6[_t]}_v{_nm}_{_W6[_t]}{_W6[_t]}", f"Vdd32.{_t}=v{_nm}(Vuu32.{_t},Vvv32.{_t})",
              "Wd,Wu,Wv", "VA_DV", "vadd/vsub")(_pairop(_f))
for _t in ("ub", "uh", "h", "w", "uw"):
    for _nm, _op in (("add", np.add), ("sub", np.subtract)):
        if _t == "uw":
            continue  # V66 has no vadduwsat (it is V68+)
        _f = _binop(_t, _op, True)
        defop(f"v{_nm}{_t}sat", f"Q6_{_Q6[_t]}_v{_nm}_{_Q6[_t]}{_Q6[_t]}_sat",
              f"Vd32.{_t}=v{_nm}(Vu32.{_t},Vv32.{_t}):sat", "Vd,Vu,Vv", "VA", "vadd/vsub")(_f)
        defop(f"v{_nm}{_t}sat_dv", f"Q6_{_W6[_t]}_v{_nm}_{_W6[_t]}{_W6[_t]}_sat",
              f"Vdd32.{_t}=v{_nm}(Vuu32.{_t},Vvv32.{_t}):sat", "Wd,Wu,Wv", "VA_DV", "vadd/vsub")(_pairop(_f))

for _t in ("ub", "h", "uh", "w"):
    defop(f"vmax{_t}", f"Q6_{_Q6[_t]}_vmax_{_Q6[_t]}{_Q6[_t]}", f"Vd32.{_t}=vmax(Vu32.{_t},Vv32.{_t})",
          "Vd,Vu,Vv", "VA", "vmax/vmin")(_binop(_t, np.maximum, False))
    defop(f"vmin{_t}", f"Q6_{_Q6[_t]}_vmin_{_Q6[_t]}{_Q6[_t]}", f"Vd32.{_t}=vmin(Vu32.{_t},Vv32.{_t})",
          "Vd,Vu,Vv", "VA", "vmax/vmin")(_binop(_t, np.minimum, False))
defop("vmaxb", "Q6_Vb_vmax_VbVb", "Vd32.b=vmax(Vu32.b,Vv32.b)", "Vd,Vu,Vv", "VA", "vmax/vmin")(
    _binop("b", np.maximum, False))
defop("vminb", "Q6_Vb_vmin_VbVb", "Vd32.b=vmin(Vu32.b,Vv32.b)", "Vd,Vu,Vv", "VA", "vmax/vmin")(
    _binop("b", np.minimum, False))


@defop("vabsw_sat", "Q6_Vw_vabs_Vw_sat", "Vd32.w=vabs(Vu32.w):sat", "Vd,Vu", "VA", "vmax/vmin")
def vabsw_sat(u):
    return sat(np.abs(i64(w(u))), np.int32)


@defop("vabsh_sat", "Q6_Vh_vabs_Vh_sat", "Vd32.h=vabs(Vu32.h):sat", "Vd,Vu", "VA", "vmax/vmin")
def vabsh_sat(u):
    return sat(np.abs(i64(h(u))), np.int16)


# ---- logic -------------------------------------------------------------------------------
@defop("vand", "Q6_V_vand_VV", "Vd32=vand(Vu32,Vv32)", "Vd,Vu,Vv", "VA", "logic")
def vand(u, v):
    return u & v


@defop("vor", "Q6_V_vor_VV", "Vd32=vor(Vu32,Vv32)", "Vd,Vu,Vv", "VA", "logic")
def vor(u, v):
    return u | v


@defop("vxor", "Q6_V_vxor_VV", "Vd32=vxor(Vu32,Vv32)", "Vd,Vu,Vv", "VA", "logic")
def vxor(u, v):
    return u ^ v


@defop("vnot", "Q6_V_vnot_V", "Vd32=vnot(Vu32)", "Vd,Vu", "VA", "logic")
def vnot(u):
    return ~u


@defop("vd0", "Q6_V_vzero", "Vd32=#0", "Vd", "VA", "vzero")
def vd0():
    return np.zeros((1, 128), np.uint8)   # broadcasts over the tile axis


@defop("vassign", "Q6_V_equals_V", "Vd32=Vu32", "Vd,Vu", "VA", "move")
def vassign(u):
    return u.copy()


@defop("vcombine", "Q6_W_vcombine_VV", "Vdd32=vcombine(Vu32,Vv32)", "Wd,Vu,Vv", "VA_DV", "move")
def vcombine(u, v):
    return np.stack([v, u], axis=1)


# ---- splat (A_CVI_VX "late" multiply-slot instructions in ext.idef) -----------------------
@defop("lvsplatw", "Q6_V_vsplat_R", "Vd32=vsplat(Rt32)", "Vd,Rt", "VX", "vsplat")
def lvsplatw(rt):
    return to_bytes(np.repeat(rt_u32(rt)[:, None], 32, axis=1))


@defop("lvsplath", "Q6_Vh_vsplat_R", "Vd32.h=vsplat(Rt32)", "Vd,Rt", "VX", "vsplat")
def lvsplath(rt):
    return to_bytes(np.repeat(rt_u32(rt).astype(np.uint16)[:, None], 64, axis=1))


@defop("lvsplatb", "Q6_Vb_vsplat_R", "Vd32.b=vsplat(Rt32)", "Vd,Rt", "VX", "vsplat")
def lvsplatb(rt):
    return to_bytes(np.repeat(rt_u32(rt).astype(np.uint8)[:, None], 128, axis=1))


# ---- sign / zero extension (A_CVI_VA_DV) --------------------------------------------------
@defop("vsb", "Q6_Wh_vsxt_Vb", "Vdd32.h=vsxt(Vu32.b)", "Wd,Vu", "VA_DV", "widen")
def vsb(u):
    x = b(u).reshape(-1, 64, 2).astype(np.int16)
    return np.stack([to_bytes(x[:, :, 0]), to_bytes(x[:, :, 1])], axis=1)


@defop("vzb", "Q6_Wuh_vzxt_Vub", "Vdd32.uh=vzxt(Vu32.ub)", "Wd,Vu", "VA_DV", "widen")
def vzb(u):
    x = ub(u).reshape(-1, 64, 2).astype(np.uint16)
    return np.stack([to_bytes(x[:, :, 0]), to_bytes(x[:, :, 1])], axis=1)


@defop("vsh", "Q6_Ww_vsxt_Vh", "Vdd32.w=vsxt(Vu32.h)", "Wd,Vu", "VA_DV", "widen")
def vsh(u):
    x = h(u).reshape(-1, 32, 2).astype(np.int32)
    return np.stack([to_bytes(x[:, :, 0]), to_bytes(x[:, :, 1])], axis=1)


# ---- compares into predicates and vmux ------------------------------------------------------
def _cmp(t: str, op, combine):
    view, dt = _T[t]
    size = np.dtype(dt).itemsize

    def f(*args):
        if combine is None:
            u, v = args
            q = None
        else:
            q, u, v = args
        r = np.repeat(op(view(u), view(v)), size, axis=1)
        return r if combine is None else combine(q, r)
    return f


_COMB = {"": None, "_and": np.logical_and, "_or": np.logical_or, "_xor": np.logical_xor}
_CMB_Q6 = {"": "", "_and": "and", "_or": "or", "_xor": "xacc"}
_CMB_SYN = {"": "=", "_and": "&=", "_or": "|=", "_xor": "^="}
for _t in ("b", "h", "w", "ub", "uh", "uw"):
    for _cn, _op in (("gt", np.greater), ("eq", np.equal)):
        if _cn == "eq" and _t.startswith("u"):
            continue
        for _sfx, _comb in _COMB.items():
            _nm = f"v{_cn}{_t}{_sfx}"
            _ops = "Qd,Vu,Vv" if _comb is None else "Qx,Vu,Vv"
            _q6v = _Q6[_t]
            _intr = f"Q6_Q_vcmp_{_cn}{_CMB_Q6[_sfx]}_{'' if _comb is None else 'Q'}{_q6v}{_q6v}"
            defop(_nm, _intr, f"Qd4{_CMB_SYN[_sfx]}vcmp.{_cn}(Vu32.{_t},Vv32.{_t})", _ops, "VA", "vcmp")(
                _cmp(_t, _op, _comb))


@defop("vmux", "Q6_V_vmux_QVV", "Vd32=vmux(Qt4,Vu32,Vv32)", "Vd,Qt,Vu,Vv", "VA", "vmux")
def vmux(q, u, v):
    return np.where(q, u, v)


@defop("vandqrt", "Q6_V_vand_QR", "Vd32=vand(Qu4,Rt32)", "Vd,Qu,Rt", "VX", "predicate")
def vandqrt(q, rt):
    by = np.tile(rt_bytes(rt, False), (1, 32))
    return np.where(q, by, np.uint8(0)).astype(np.uint8)


@defop("vandvrt", "Q6_Q_vand_VR", "Qd4=vand(Vu32,Rt32)", "Qd,Vu,Rt", "VX", "predicate")
def vandvrt(u, rt):
    by = np.tile(rt_bytes(rt, False), (1, 32))
    return (u & by) != 0


@defop("pred_and", "Q6_Q_and_QQ", "Qd4=and(Qs4,Qt4)", "Qd,Qs,Qt", "VA_DV", "predicate")
def pred_and(qs, qt):
    return qs & qt


@defop("pred_or", "Q6_Q_or_QQ", "Qd4=or(Qs4,Qt4)", "Qd,Qs,Qt", "VA_DV", "predicate")
def pred_or(qs, qt):
    return qs | qt


@defop("pred_xor", "Q6_Q_xor_QQ", "Qd4=xor(Qs4,Qt4)", "Qd,Qs,Qt", "VA_DV", "predicate")
def pred_xor(qs, qt):
    return qs ^ qt


@defop("pred_not", "Q6_Q_not_Q", "Qd4=not(Qs4)", "Qd,Qs", "VA", "predicate")
def pred_not(qs):
    return ~qs


@defop("pred_scalar2", "Q6_Q_vsetq_R", "Qd4=vsetq(Rt32)", "Qd,Rt", "VP", "predicate")
def pred_scalar2(rt):
    n = (rt_u32(rt) & 127).astype(np.int64)
    return np.arange(128)[None, :] < n[:, None]


@defop("extractw", "Q6_R_vextract_VR", "Rd32=vextract(Vu32,Rs32)", "Rd,Vu,Rs", "VEXT", "move")
def extractw(u, rs):
    idx = ((rt_u32(rs) & 127) >> 2).astype(np.int64)
    return np.take_along_axis(w(u), idx[:, None], axis=1)[:, 0].astype(np.int64)


@defop("vinsertwr", "Q6_Vw_vinsert_VwR", "Vx32.w=vinsert(Rt32)", "Vx,Rt", "VX", "move")
def vinsertwr(x, rt):
    out = uw(x).copy()
    out[:, 0] = rt_u32(rt)
    return to_bytes(out)
