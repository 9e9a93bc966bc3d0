"""The numba hot paths agree bit for bit with their plain-numpy twins, and compiled regions
(isa.hvx.superblock) leave exactly the state of the per-instruction numpy path."""
import numpy as np
import pytest
from numba import njit, types
from numba.extending import intrinsic

import isa.hvx as hvx
from isa.hvx import Builder, R, V, fast, superblock
from isa.kernels import conv, gemm


@intrinsic
def _rmpy_bus_generic(typingctx, buf, d_off, u_off, rt):   # the non-AVX2 codegen, tested everywhere
    return types.void(buf, types.int64, types.int64, types.int64), fast._rmpy_bus_codegen


@intrinsic
def _rmpy_bus_avx2(typingctx, buf, d_off, u_off, rt):      # the AVX2 codegen (hosts with AVX2 only)
    return types.void(buf, types.int64, types.int64, types.int64), fast._rmpy_bus_avx2_codegen


@intrinsic
def _rmpy_bus_vnni(typingctx, buf, d_off, u_off, rt):      # the AVX512-VNNI codegen (hosts with it only)
    return types.void(buf, types.int64, types.int64, types.int64), fast._rmpy_bus_vnni_codegen


@intrinsic
def _rmpy_bus4_generic(typingctx, buf, u_off, d0, d1, d2, d3, r0, r1, r2, r3):   # the non-VNNI fused form
    return types.void(buf, *([types.int64] * 9)), fast._rmpy_bus4_codegen(fast._rmpy_bus_codegen)


@njit
def _apply4(buf, u, d, r, generic):
    if generic:
        _rmpy_bus4_generic(buf, u * 128, d[0] * 128, d[1] * 128, d[2] * 128, d[3] * 128, r[0], r[1], r[2], r[3])
    else:
        fast.rmpy_bus_acc4(buf, u * 128, d[0] * 128, d[1] * 128, d[2] * 128, d[3] * 128, r[0], r[1], r[2], r[3])


@pytest.mark.parametrize("generic", [False, True])
def test_fused_four_vrmpy_on_one_vu_match_numpy(generic):
    """rmpy_bus_acc4 (the host's form, and the generic one) equals four vrmpybus_acc in numpy, an
    accumulator named twice included (its two accumulates add up)."""
    rng = np.random.default_rng(7)
    for d in ([0, 1, 2, 3], [3, 0, 3, 1]):
        for _ in range(10):
            regs = rng.integers(0, 256, (6, 128), dtype=np.uint8)
            regs[5, :8] = [0, 0xFF, 0x80, 0x7F, 1, 0, 0xFF, 0x80]
            r = rng.integers(-2 ** 31, 2 ** 31, 4)
            r[0] = -2 ** 31
            want = regs.copy()
            for i in range(4):
                want[d[i]] = fast.vrmpybus_acc_ref(want[d[i]][None], want[5][None], np.array([r[i]]))[0]
            got = regs.copy()
            _apply4(got, 5, np.array(d, np.int64), r.astype(np.int64), generic)
            assert (got == want).all()


@njit
def _apply_x86(buf, d, u, r, which):
    if which == 4:
        _rmpy_bus_avx2(buf, d * 128, u * 128, r)
    else:
        _rmpy_bus_vnni(buf, d * 128, u * 128, r)


@njit
def _apply(buf, d, u, r, which):
    if which == 0:
        fast.rmpy_bus_acc(buf, d * 128, u * 128, r)
    elif which == 1:
        _rmpy_bus_generic(buf, d * 128, u * 128, r)
    elif which == 2:
        fast.rmpy_bv_acc(buf, d * 128, u * 128, r * 128)
    else:
        fast.vcopy(buf, d * 128, buf, u * 128 + r)


def _cases(seed, count=40):
    rng = np.random.default_rng(seed)
    edge = np.array([0x00, 0xFF, 0x80, 0x7F, 0x01], np.uint8)
    for i in range(count):
        regs = rng.integers(0, 256, (4, 128), dtype=np.uint8)
        if i < 10:
            regs[1] = edge[i % 5]
            regs[0] = edge[(i // 5) % 5]
        rt = int(rng.integers(-2 ** 31, 2 ** 31)) if i >= 5 else [-2 ** 31, 2 ** 31 - 1, -1, 0, 0x7F80807F][i]
        yield regs, rt


@pytest.mark.parametrize("which", [0, 1, 4, 5])
def test_rmpy_bus_acc_matches_numpy(which):
    """0: the host's codegen, 1: the generic one, 4: AVX2, 5: AVX512-VNNI (each where the host has it)."""
    if (which == 4 and not fast._AVX2) or (which == 5 and not fast._VNNI):
        pytest.skip("the host CPU lacks the instructions of this codegen")
    apply = _apply_x86 if which >= 4 else _apply
    for regs, rt in _cases(which):
        want = fast.vrmpybus_acc_ref(regs[0:1], regs[1:2], np.array([rt]))[0]
        got = regs.copy()
        apply(got, 0, 1, rt, which)
        assert (got[0] == want).all() and (got[1:] == regs[1:]).all()
        alias = regs.copy()                     # Vd == Vu
        apply(alias, 1, 1, rt, which)
        assert (alias[1] == fast.vrmpybus_acc_ref(regs[1:2], regs[1:2], np.array([rt]))[0]).all()


def test_rmpy_bv_acc_and_vcopy_match_numpy():
    for regs, _ in _cases(7):
        got = regs.copy()
        _apply(got, 0, 1, 2, 2)
        assert (got[0] == fast.vrmpybv_acc_ref(regs[0:1], regs[1:2], regs[2:3])[0]).all()
        got = regs.copy()
        _apply(got, 3, 0, 5, 3)                 # unaligned source
        assert (got[3] == regs.reshape(-1)[5:133]).all()


@pytest.mark.parametrize("tiles", [1, 3, 40])
def test_vrmpybus_per_instruction_matches_numpy(tiles):
    rng = np.random.default_rng(tiles)
    u = rng.integers(0, 256, (tiles, 128), dtype=np.uint8)
    x = rng.integers(0, 256, (tiles, 128), dtype=np.uint8)
    rt = rng.integers(-2 ** 31, 2 ** 31, tiles)
    rt[0] = -2 ** 31
    assert (fast.vrmpybus(u, rt) == fast.vrmpybus_ref(u, rt)).all()
    assert (fast.vrmpybus_acc(x, u, rt) == fast.vrmpybus_acc_ref(x, u, rt)).all()


def _both_paths(prog, tiles, seed, share=None):
    out = []
    for fast_path in (True, False):
        st = hvx.HvxState(tiles, prog.mem_bytes if share is None else share[0])
        st.mem[:] = np.random.default_rng(seed).integers(0, 256, st.mem.shape, dtype=np.uint8)
        if share is not None:
            st.share(*share)
        hvx.run(prog, st, fast=fast_path)
        out.append(st)
    a, b = out
    assert (a.V == b.V).all() and (a.R == b.R).all() and (a.mem == b.mem).all() and (a.Q == b.Q).all()


@pytest.mark.parametrize("tiles", [1, 6, 37])
@pytest.mark.parametrize("epilogue", gemm.EPILOGUES)
def test_compiled_gemm_matches_reference_path(tiles, epilogue):
    """Whole GEMM programs (one compiled region, lockstep batches, threads) equal the numpy path."""
    _both_paths(gemm.build_gemm_tile(72, epilogue), tiles, tiles)


def test_compiled_regions_with_shared_panels_match_reference_path():
    prog = gemm.build_gemm_tile(40)
    off = prog.buffer("B").offset
    rng = np.random.default_rng(3)
    images = rng.integers(0, 256, (3, prog.mem_bytes - off), dtype=np.uint8)
    _both_paths(prog, 11, 4, share=(off, images, np.arange(11) % 3))


def test_mixed_program_matches_reference_path():
    """A conv tile mixes compiled regions with numpy-only instructions (vmemu, vshuff, vxor)."""
    from isa.kernels.layout import Geometry
    _both_paths(conv.build_conv_tile(Geometry(6, 7, 3, 3, 1, 1), 5, 6), 9, 2)


def test_compiled_encoding_covers_loops_and_scalars():
    b = Builder("t")
    ox = b.buffer("X", 4 * 128)
    b.A2_tfrsi(R(1), ox)
    b.A2_tfrsi(R(2), -7)
    with b.loop(3):
        with b.loop(2):
            b.vL32b_pi(V(0), R(1), 1, buf="X")
            b.vaddw(V(1), V(1), V(0))
            b.A2_addi(R(2), R(2), 5)
        b.vror(V(2), V(1), R(2))
        b.vaslw(V(3), V(2), R(2))
        b.vsubw(V(4), V(3), V(1))
        b.lvsplatw(V(5), R(2))
        b.A2_tfr(R(3), R(2))
        b.L2_loadri_io(R(4), R(1), -4, buf="X")
        b.A2_tfrsi(R(1), ox)
    b.vS32b_ai(R(1), 3, V(4), buf="X")
    prog = b.build()
    assert all(superblock.compilable(x) for x in prog.body)
    _both_paths(prog, 5, 9)


def test_store_into_shared_range_faults():
    b = Builder("t")
    o = b.buffer("X", 128)
    b.A2_tfrsi(R(1), o)
    b.vS32b_ai(R(1), 0, V(0), buf="X")
    prog = b.build()
    for fast_path in (True, False):
        st = hvx.HvxState(2, prog.mem_bytes)
        st.share(o, np.zeros((1, 128), np.uint8), [0, 0])
        with pytest.raises(hvx.MemoryFault):
            hvx.run(prog, st, fast=fast_path)


@pytest.mark.parametrize("tiles", [1, 3, 1024])
def test_state_arrays_start_on_a_vector_boundary(tiles):
    """The compiled regions move vectors as 64-byte host words: the register file, the memory
    images and the shared images start on a 128-byte boundary (numpy gives 16), so no word
    straddles two cache lines; a misaligned or non-contiguous image is copied, values kept."""
    from isa.hvx.state import ALIGN, aligned_zeros
    st = hvx.HvxState(tiles, 6400)
    assert st.V.ctypes.data % ALIGN == 0 and st.mem.ctypes.data % ALIGN == 0
    assert st.V.shape == (tiles, 32, 128) and st.V.flags.c_contiguous and not st.V.any()
    vals = (np.arange(3 * 256) * 7).astype(np.uint8).reshape(3, 256)
    raw = np.zeros(3 * 256 + 1, np.uint8)
    misaligned = raw[1:].reshape(3, 256) if raw.ctypes.data % ALIGN == 0 else raw[:-1].reshape(3, 256)
    misaligned[...] = vals
    for images in (misaligned, vals[:, ::-1]):              # off the boundary; not C-contiguous
        st.share(6400, images, np.arange(tiles) % 3)
        (_, data, _), = st.shares
        assert data.ctypes.data % ALIGN == 0 and (data == images).all()
    z = aligned_zeros((5, 7), np.int32)
    assert z.ctypes.data % ALIGN == 0 and z.shape == (5, 7) and z.dtype == np.int32 and not z.any()


@njit
def _words(buf, offs):
    out = np.empty(len(offs), np.int64)
    for i in range(len(offs)):
        out[i] = fast.load_s32(buf, offs[i])
    return out


def test_load_s32_matches_numpy():
    """memw through load_s32: the four bytes at any offset (aligned or not, in a 2-D array's later
    rows) as a little-endian, sign-extended word."""
    buf = np.random.default_rng(2).integers(0, 256, (3, 64), dtype=np.uint8)
    buf[1, 4:8] = [0, 0, 0, 0x80]
    offs = np.array([0, 1, 3, 64 + 4, 64 + 61, 2 * 64 + 60], np.int64)
    flat = buf.ravel()
    want = [int(flat[o:o + 4].copy().view("<i4")[0]) for o in offs]
    assert _words(buf, offs).tolist() == want and -2 ** 31 in want
