"""Numba kernels for the hottest HVX instructions, each beside its plain-numpy twin.

``vrmpy`` is the inner instruction of every INT8 GEMM/conv kernel.  Its compiled forms are numba
intrinsics written in target-independent LLVM vector IR (``rmpy_bus_acc``, ``rmpy_bv_acc``),
which LLVM lowers to ``pmaddwd``-based code on x86 and to plain vector code elsewhere; numba's
own integer typing widens to int64 and defeats that.  The numpy twins (``*_ref``) define the semantics;
tests/isa/test_fast_paths.py checks that the two agree bit for bit.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from .lanes import rt_bytes, rt_u32


def vrmpybus_ref(u: np.ndarray, rt: np.ndarray) -> np.ndarray:
    """Vd.w[i] = sum_j Vu.ub[4i+j] * Rt.b[j] (plain numpy)."""
    x = u.view(np.uint8).reshape(-1, 32, 4).astype(np.int32)
    r = rt_bytes(rt, True).astype(np.int32)
    return np.ascontiguousarray((x * r[:, None, :]).sum(axis=2, dtype=np.int32)).view(np.uint8)


def vrmpybus_acc_ref(x: np.ndarray, u: np.ndarray, rt: np.ndarray) -> np.ndarray:
    """Vx.w[i] += sum_j Vu.ub[4i+j] * Rt.b[j], wrapping (plain numpy)."""
    acc = x.view(np.int32).astype(np.int64) + vrmpybus_ref(u, rt).view(np.int32)
    return np.ascontiguousarray(acc.astype(np.int32)).view(np.uint8)


def vrmpybv_acc_ref(x: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Vx.w[i] += sum_j Vu.b[4i+j] * Vv.b[4i+j], wrapping (plain numpy)."""
    p = (u.view(np.int8).reshape(-1, 32, 4).astype(np.int64) * v.view(np.int8).reshape(-1, 32, 4)).sum(axis=2)
    return np.ascontiguousarray((x.view(np.int32) + p).astype(np.int32)).view(np.uint8)


# ---- the compiled vrmpy: LLVM vector IR --------------------------------------------------------

def _byte_ptr(context, builder, arrty, arr, off):
    a = context.make_array(arrty)(context, builder, arr)
    return builder.gep(builder.bitcast(a.data, ir.IntType(8).as_pointer()), [off])


def _rmpy_codegen(u_signed: bool, v_scalar: bool, v_signed: bool):
    """Generic vrmpy: widen, multiply lane-wise, sum each word's four products with two even/odd
    shuffle-adds (LLVM turns the first into pmaddwd on x86)."""
    i8, i32 = ir.IntType(8), ir.IntType(32)
    v128x8, v128x32 = ir.VectorType(i8, 128), ir.VectorType(i32, 128)

    def codegen(context, builder, sig, args):
        buf, d_off, u_off, v = args
        dst = builder.bitcast(_byte_ptr(context, builder, sig.args[0], buf, d_off), ir.VectorType(i32, 32).as_pointer())
        u8 = builder.load(builder.bitcast(_byte_ptr(context, builder, sig.args[0], buf, u_off), v128x8.as_pointer()), align=1)
        uw = builder.sext(u8, v128x32) if u_signed else builder.zext(u8, v128x32)
        if v_scalar:   # Rt.b[j] repeated over the 32 words
            r4 = builder.bitcast(builder.trunc(v, i32), ir.VectorType(i8, 4))
            r4 = builder.sext(r4, ir.VectorType(i32, 4)) if v_signed else builder.zext(r4, ir.VectorType(i32, 4))
            vw = builder.shuffle_vector(r4, ir.Constant(r4.type, None),
                                        ir.Constant(ir.VectorType(i32, 128), [j & 3 for j in range(128)]))
        else:          # v is the byte offset of Vv in the same register file
            v8 = builder.load(builder.bitcast(_byte_ptr(context, builder, sig.args[0], buf, v), v128x8.as_pointer()), align=1)
            vw = builder.sext(v8, v128x32) if v_signed else builder.zext(v8, v128x32)
        p = builder.mul(uw, vw)

        def half(x, n, first):
            return builder.shuffle_vector(x, ir.Constant(x.type, None),
                                          ir.Constant(ir.VectorType(i32, n), list(range(first, 2 * n, 2))))
        s = builder.add(half(p, 64, 0), half(p, 64, 1))        # pairs (pmaddwd on x86)
        s = builder.add(half(s, 32, 0), half(s, 32, 1))        # quads
        acc = builder.load(dst, align=4)
        builder.store(builder.add(acc, s), dst, align=4)       # wrapping int32 accumulate
        return context.get_dummy_value()
    return codegen


def _madd(builder, a, b):
    """Generic-IR form of pmaddwd: <64 x i16> a, b -> <32 x i32> a[2i]*b[2i] + a[2i+1]*b[2i+1]."""
    i32 = ir.IntType(32)
    out = None
    for first in (0, 1):
        idx = ir.Constant(ir.VectorType(i32, 32), list(range(first, 64, 2)))
        x = builder.sext(builder.shuffle_vector(a, ir.Constant(a.type, None), idx), ir.VectorType(i32, 32))
        y = builder.sext(builder.shuffle_vector(b, ir.Constant(b.type, None), idx), ir.VectorType(i32, 32))
        out = builder.mul(x, y) if out is None else builder.add(out, builder.mul(x, y))
    return out


def _rmpy_bus_codegen(context, builder, sig, args):
    """Vd.w += vrmpy(Vu.ub, Rt.b) without cross-lane shuffles: each word of Vu is split into its
    even bytes (b0, b2) and odd bytes (b1, b3) as 16-bit halves, and two pmaddwd-style products with
    (r0, r2) and (r1, r3) give b0*r0 + b2*r2 and b1*r1 + b3*r3 in the word's own lane."""
    buf, d_off, u_off, rt = args
    i8, i16, i32 = ir.IntType(8), ir.IntType(16), ir.IntType(32)
    vw = ir.VectorType(i32, 32)
    dst = builder.bitcast(_byte_ptr(context, builder, sig.args[0], buf, d_off), vw.as_pointer())
    w = builder.load(builder.bitcast(_byte_ptr(context, builder, sig.args[0], buf, u_off), vw.as_pointer()), align=1)
    mask = ir.Constant(vw, [0x00FF00FF] * 32)
    even = builder.bitcast(builder.and_(w, mask), ir.VectorType(i16, 64))
    odd = builder.bitcast(builder.and_(builder.lshr(w, ir.Constant(vw, [8] * 32)), mask), ir.VectorType(i16, 64))
    r4 = builder.sext(builder.bitcast(builder.trunc(rt, i32), ir.VectorType(i8, 4)), ir.VectorType(i16, 4))
    undef = ir.Constant(r4.type, None)
    r_even = builder.shuffle_vector(r4, undef, ir.Constant(ir.VectorType(i32, 64), [(0, 2)[j & 1] for j in range(64)]))
    r_odd = builder.shuffle_vector(r4, undef, ir.Constant(ir.VectorType(i32, 64), [(1, 3)[j & 1] for j in range(64)]))
    s = builder.add(_madd(builder, even, r_even), _madd(builder, odd, r_odd))
    acc = builder.load(dst, align=4)
    builder.store(builder.add(acc, s), dst, align=4)       # wrapping int32 accumulate
    return context.get_dummy_value()


def _host_has_avx2() -> bool:
    """numba compiles for the host CPU unless NUMBA_CPU_NAME says otherwise."""
    try:
        from llvmlite import binding
        from numba.core import config
        return config.CPU_NAME is None and bool(binding.get_host_cpu_features().get("avx2", False))
    except Exception:   # any doubt: the generic IR
        return False


_AVX2 = _host_has_avx2()


def _host_has_avx512vnni() -> bool:
    """AVX512-VNNI's vpdpbusd is vrmpy(Vu.ub, Rt.b) accumulate itself (four u8 x s8 products summed
    into each int32 lane, wrapping: Intel SDM, VPDPBUSD); numba compiles for the host CPU unless
    NUMBA_CPU_NAME says otherwise."""
    try:
        from llvmlite import binding
        from numba.core import config
        return config.CPU_NAME is None and bool(binding.get_host_cpu_features().get("avx512vnni", False))
    except Exception:   # any doubt: the AVX2 or generic IR
        return False


_VNNI = _host_has_avx512vnni()


def _rmpy_bus_avx2_codegen(context, builder, sig, args):
    """The same computation as ``_rmpy_bus_codegen`` with the pmaddwd spelt out
    (llvm.x86.avx2.pmadd.wd), 32 bytes at a time: LLVM's pattern matcher does not find it."""
    from numba.core import cgutils
    buf, d_off, u_off, rt = args
    i8, i16, i32 = ir.IntType(8), ir.IntType(16), ir.IntType(32)
    v8w, v16h = ir.VectorType(i32, 8), ir.VectorType(i16, 16)
    pmadd = cgutils.get_or_insert_function(builder.module, ir.FunctionType(v8w, [v16h, v16h]), "llvm.x86.avx2.pmadd.wd")
    r4 = builder.sext(builder.bitcast(builder.trunc(rt, i32), ir.VectorType(i8, 4)), ir.VectorType(i16, 4))
    undef = ir.Constant(r4.type, None)
    r_even = builder.shuffle_vector(r4, undef, ir.Constant(ir.VectorType(i32, 16), [(0, 2)[j & 1] for j in range(16)]))
    r_odd = builder.shuffle_vector(r4, undef, ir.Constant(ir.VectorType(i32, 16), [(1, 3)[j & 1] for j in range(16)]))
    mask = ir.Constant(v8w, [0x00FF00FF] * 8)
    eight = ir.Constant(v8w, [8] * 8)
    src = builder.bitcast(_byte_ptr(context, builder, sig.args[0], buf, u_off), v8w.as_pointer())
    dst = builder.bitcast(_byte_ptr(context, builder, sig.args[0], buf, d_off), v8w.as_pointer())
    for c in range(4):
        w = builder.load(builder.gep(src, [ir.Constant(i32, c)]), align=1)
        even = builder.bitcast(builder.and_(w, mask), v16h)
        odd = builder.bitcast(builder.and_(builder.lshr(w, eight), mask), v16h)
        s = builder.add(builder.call(pmadd, [even, r_even]), builder.call(pmadd, [odd, r_odd]))
        pd = builder.gep(dst, [ir.Constant(i32, c)])
        builder.store(builder.add(builder.load(pd, align=4), s), pd, align=4)
    return context.get_dummy_value()


def _rmpy_bus_vnni_codegen(context, builder, sig, args):
    """The same computation in two vpdpbusd (llvm.x86.avx512.vpdpbusd.512): each int32 lane of the
    accumulator += the sum of its four u8 (Vu) x s8 (Rt, broadcast) products, wrapping."""
    from numba.core import cgutils
    buf, d_off, u_off, rt = args
    i32 = ir.IntType(32)
    v16w = ir.VectorType(i32, 16)
    dp = cgutils.get_or_insert_function(builder.module, ir.FunctionType(v16w, [v16w, v16w, v16w]),
                                        "llvm.x86.avx512.vpdpbusd.512")
    r1 = builder.insert_element(ir.Constant(v16w, None), builder.trunc(rt, i32), ir.Constant(i32, 0))
    rv = builder.shuffle_vector(r1, ir.Constant(v16w, None), ir.Constant(v16w, [0] * 16))
    src = builder.bitcast(_byte_ptr(context, builder, sig.args[0], buf, u_off), v16w.as_pointer())
    dst = builder.bitcast(_byte_ptr(context, builder, sig.args[0], buf, d_off), v16w.as_pointer())
    for c in range(2):
        u = builder.load(builder.gep(src, [ir.Constant(i32, c)]), align=1)
        pd = builder.gep(dst, [ir.Constant(i32, c)])
        builder.store(builder.call(dp, [builder.load(pd, align=4), u, rv]), pd, align=4)
    return context.get_dummy_value()


@intrinsic
def rmpy_bus_acc(typingctx, buf, d_off, u_off, rt):
    """Register file bytes ``buf`` (C-contiguous): Vd.w += vrmpy(Vu.ub, Rt.b) with Vd, Vu at byte
    offsets ``d_off``, ``u_off`` and Rt an int64 holding 32 bits.  Numpy twin: vrmpybus_acc_ref."""
    return (types.void(buf, types.int64, types.int64, types.int64),
            _rmpy_bus_vnni_codegen if _VNNI else _rmpy_bus_avx2_codegen if _AVX2 else _rmpy_bus_codegen)


def _rmpy_bus4_vnni_codegen(context, builder, sig, args):
    """Four ``_rmpy_bus_vnni_codegen`` on one Vu: Vu's two halves are loaded once (the caller
    guarantees that no Vd is Vu)."""
    from numba.core import cgutils
    buf, u_off = args[0], args[1]
    ds, rs = args[2:6], args[6:10]
    i32 = ir.IntType(32)
    v16w = ir.VectorType(i32, 16)
    dp = cgutils.get_or_insert_function(builder.module, ir.FunctionType(v16w, [v16w, v16w, v16w]),
                                        "llvm.x86.avx512.vpdpbusd.512")
    src = builder.bitcast(_byte_ptr(context, builder, sig.args[0], buf, u_off), v16w.as_pointer())
    us = [builder.load(builder.gep(src, [ir.Constant(i32, c)]), align=1) for c in range(2)]
    for d, r in zip(ds, rs):
        r1 = builder.insert_element(ir.Constant(v16w, None), builder.trunc(r, i32), ir.Constant(i32, 0))
        rv = builder.shuffle_vector(r1, ir.Constant(v16w, None), ir.Constant(v16w, [0] * 16))
        dst = builder.bitcast(_byte_ptr(context, builder, sig.args[0], buf, d), v16w.as_pointer())
        for c in range(2):
            pd = builder.gep(dst, [ir.Constant(i32, c)])
            builder.store(builder.call(dp, [builder.load(pd, align=4), us[c], rv]), pd, align=4)
    return context.get_dummy_value()


def _rmpy_bus4_codegen(one):
    """Four vrmpy(Vu.ub, Rt.b) accumulates on one Vu through the single-instruction codegen ``one``."""
    def codegen(context, builder, sig, args):
        one_sig = types.void(sig.args[0], types.int64, types.int64, types.int64)
        for i in range(4):
            one(context, builder, one_sig, (args[0], args[2 + i], args[1], args[6 + i]))
        return context.get_dummy_value()
    return codegen


@intrinsic
def rmpy_bus_acc4(typingctx, buf, u_off, d0, d1, d2, d3, r0, r1, r2, r3):
    """Four rmpy_bus_acc that share Vu (at ``u_off``): Vd_i.w += vrmpy(Vu.ub, Rt_i.b) for Vd_i at
    ``d0``..``d3`` and Rt_i in ``r0``..``r3``; no Vd_i may be Vu (the accumulates commute, so their
    order does not matter).  Same result as four rmpy_bus_acc (tests/isa/test_fast_paths.py)."""
    one = _rmpy_bus_vnni_codegen if _VNNI else _rmpy_bus_avx2_codegen if _AVX2 else _rmpy_bus_codegen
    return (types.void(buf, *([types.int64] * 9)),
            _rmpy_bus4_vnni_codegen if _VNNI else _rmpy_bus4_codegen(one))


@intrinsic
def rmpy_bv_acc(typingctx, buf, d_off, u_off, v_off):
    """Vd.w += vrmpy(Vu.b, Vv.b) on register-file bytes (offsets in bytes).  Twin: vrmpybv_acc_ref."""
    return types.void(buf, types.int64, types.int64, types.int64), _rmpy_codegen(True, False, True)


@intrinsic
def vcopy(typingctx, dst, d_off, src, s_off):
    """Copy one 128-byte vector from ``src`` bytes at ``s_off`` to ``dst`` bytes at ``d_off`` (one
    unaligned vector load and store; vmem, vassign).  Twin: a numpy slice assignment."""
    def codegen(context, builder, sig, args):
        d, doff, s, soff = args
        vt = ir.VectorType(ir.IntType(8), 128).as_pointer()
        x = builder.load(builder.bitcast(_byte_ptr(context, builder, sig.args[2], s, soff), vt), align=1)
        builder.store(x, builder.bitcast(_byte_ptr(context, builder, sig.args[0], d, doff), vt), align=1)
        return context.get_dummy_value()
    return types.void(dst, types.int64, src, types.int64), codegen


@intrinsic
def load_s32(typingctx, buf, off):
    """The 32-bit word at byte ``off`` of ``buf`` (C-contiguous; any alignment), little-endian as
    Hexagon and the hosts numba targets, sign-extended to int64 (memw).  Twin: the bytes
    composed in numpy (tests/isa/test_fast_paths.py)."""
    def codegen(context, builder, sig, args):
        b, o = args
        p = builder.bitcast(_byte_ptr(context, builder, sig.args[0], b, o), ir.IntType(32).as_pointer())
        return builder.sext(builder.load(p, align=1), ir.IntType(64))
    return types.int64(buf, types.int64), codegen


# ---- per-instruction entry points (the table semantics use these for vrmpybus) ------------------

@njit(cache=True, boundscheck=False, error_model="numpy")
def _vrmpybus_nb(x, u, rt, out):
    """out[t] = x[t] + vrmpy(u[t].ub, rt[t].b) over tiles; x, u, out: [T, 128] uint8 (out may be x)."""
    buf = np.empty((2, 128), np.uint8)
    for t in range(u.shape[0]):
        buf[0] = x[t]
        buf[1] = u[t]
        rmpy_bus_acc(buf, 0, 128, rt[t])
        out[t] = buf[0]


def vrmpybus(u: np.ndarray, rt: np.ndarray) -> np.ndarray:
    out = np.zeros((u.shape[0], 128), np.uint8)
    _vrmpybus_nb(out, np.ascontiguousarray(u, np.uint8), rt_u32(rt).astype(np.int64), out)
    return out


def vrmpybus_acc(x: np.ndarray, u: np.ndarray, rt: np.ndarray) -> np.ndarray:
    out = np.empty((u.shape[0], 128), np.uint8)
    _vrmpybus_nb(np.ascontiguousarray(x, np.uint8), np.ascontiguousarray(u, np.uint8),
                 rt_u32(rt).astype(np.int64), out)
    return out
