"""socsim's ARM kernels (isa/arm/kernels) against numpy under qemu-aarch64, and the committed
cycles table (calibration/armk_cycles.json) against a fresh llvm-mca run (docs/oracles.md 2)."""
import json
import os
import struct
import subprocess

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isa.arm import armk

pytestmark = pytest.mark.oracle


def _need(*tools):
    missing = [name for name, path in tools if path is None]
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{', '.join(missing)} missing on CI")
        pytest.skip(f"{', '.join(missing)} not installed")


@pytest.fixture(scope="module")
def exes(tmp_path_factory):
    _need(("clang", armk.clang()), ("qemu-aarch64", armk.qemu()))
    d = tmp_path_factory.mktemp("armk")
    return {k: armk.build(k, d) for k in sorted({lp.kernel for lp in armk.LOOPS.values()})}


def hdr(*words):
    return struct.pack("<4i", *(list(words) + [0] * (4 - len(words))))


def f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(k=st.integers(1, 40), seed=st.integers(0, 2**31))
def test_gemm_f32_12x8(exes, k, seed):
    rng = np.random.default_rng(seed)
    a, b = f32(rng, k, 12), f32(rng, k, 8)
    out = np.frombuffer(armk.run(exes["gemm_f32_12x8"], hdr(k) + a.tobytes() + b.tobytes()), np.float32)
    np.testing.assert_allclose(out.reshape(12, 8), a.T.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@SETTINGS
@given(k4=st.integers(1, 20), seed=st.integers(0, 2**31))
def test_gemm_s8_sdot_12x8_bit_exact(exes, k4, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, (k4, 12, 4)).astype(np.int8)
    b = rng.integers(-128, 128, (k4, 8, 4)).astype(np.int8)
    a[0, 0, :] = -128  # the extreme products
    b[0, 0, :] = -128
    out = np.frombuffer(armk.run(exes["gemm_s8_sdot_12x8"], hdr(k4) + a.tobytes() + b.tobytes()), np.int32)
    ref = np.einsum("kil,kjl->ij", a.astype(np.int64), b.astype(np.int64))
    assert (out.reshape(12, 8) == ref).all()


@SETTINGS
@given(groups=st.integers(1, 6), seed=st.integers(0, 2**31))
def test_im2col_pack_transposes_into_the_12_wide_panel(exes, groups, seed):
    n4 = 3 * groups
    src = f32(np.random.default_rng(seed), n4, 4, 4)   # block, pixel, channel
    out = np.frombuffer(armk.run(exes["im2col_pack_f32"], hdr(n4) + src.tobytes()), np.float32)
    # panel group g: 4 channel rows of 12 pixels (the 3 blocks of the group side by side)
    ref = src.reshape(groups, 3, 4, 4).transpose(0, 3, 1, 2).reshape(groups, 4, 12)
    assert (out.reshape(groups, 4, 12) == ref).all()


@SETTINGS
@given(w=st.integers(1, 9), h=st.integers(1, 5), stride=st.integers(1, 2), seed=st.integers(0, 2**31))
def test_col2im_is_the_adjoint_of_im2col(exes, w, h, stride, seed):
    cols = f32(np.random.default_rng(seed), 3, 3, h, w, 4)
    out = np.frombuffer(armk.run(exes["col2im_f32"], hdr(w, h, stride) + cols.tobytes()), np.float32)
    ow, oh = (w - 1) * stride + 3, (h - 1) * stride + 3
    ref = np.zeros((oh, ow, 4), np.float64)
    for ky in range(3):
        for kx in range(3):
            ref[ky:ky + (h - 1) * stride + 1:stride, kx:kx + (w - 1) * stride + 1:stride] += cols[ky, kx]
    np.testing.assert_allclose(out.reshape(oh, ow, 4), ref, rtol=1e-5, atol=1e-5)


@SETTINGS
@given(w=st.integers(3, 20), h=st.integers(3, 6), seed=st.integers(0, 2**31))
def test_depthwise_3x3(exes, w, h, seed):
    rng = np.random.default_rng(seed)
    wt, x = f32(rng, 3, 3, 4), f32(rng, h, w, 4)
    out = np.frombuffer(armk.run(exes["dw3x3_f32"], hdr(w, h) + wt.tobytes() + x.tobytes()), np.float32)
    ref = sum(x[ky:ky + h - 2, kx:kx + w - 2].astype(np.float64) * wt[ky, kx] for ky in range(3) for kx in range(3))
    np.testing.assert_allclose(out.reshape(h - 2, w - 2, 4), ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op", [0, 1, 2, 3])
@pytest.mark.parametrize("n", [1, 7, 64])
def test_eltwise(exes, op, n):
    rng = np.random.default_rng(op * 100 + n)
    x, y = f32(rng, n, 4), f32(rng, n, 4)
    x[0, 0], x[0, 1] = 0.0, -0.0
    sb = f32(rng, 2, 4)
    data = {0: x.tobytes(), 1: x.tobytes() + y.tobytes(), 2: sb.tobytes() + x.tobytes(), 3: x.tobytes() + y.tobytes()}[op]
    out = np.frombuffer(armk.run(exes["eltwise_f32"], hdr(op, n) + data), np.float32).reshape(n, 4)
    ref = {0: np.maximum(x, 0), 1: x + y, 2: x * sb[0] + sb[1], 3: np.where(x > 0, y, 0)}[op]
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)


def test_winograd_f23_computes_the_3x3_convolution(exes):
    """Source transform, the per-plane products with the transformed weights (numpy here: the
    GEMM is the tested 12x8 tile), destination transform: equals the direct convolution."""
    rng = np.random.default_rng(3)
    nt = 5
    x, g = f32(rng, 4, 2 * nt + 2, 4), f32(rng, 3, 3, 4)        # one channel group of 4, depthwise-style
    v = np.frombuffer(armk.run(exes["winograd_f23"], hdr(0, nt) + x.tobytes()), np.float32).reshape(16, nt, 4)
    G = np.array([[1, 0, 0], [.5, .5, .5], [.5, -.5, .5], [0, 0, 1]])
    u = np.einsum("ai,ijc,bj->abc", G, g, G).reshape(16, 1, 4)
    m = (v * u).astype(np.float32)
    y = np.frombuffer(armk.run(exes["winograd_f23"], hdr(1, nt) + m.tobytes()), np.float32).reshape(2, 2 * nt, 4)
    ref = sum(x[ky:ky + 2, kx:kx + 2 * nt].astype(np.float64) * g[ky, kx] for ky in range(3) for kx in range(3))
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)


def test_bad_header_exits_nonzero(exes):
    with pytest.raises(subprocess.CalledProcessError):
        armk.run(exes["eltwise_f32"], hdr(9, 1) + bytes(16))


def test_committed_cycles_table_matches_a_fresh_llvm_mca_run(tmp_path):
    _need(("clang", armk.clang()), ("llvm-mca 17+", armk.mca()))
    committed = json.loads(armk.TABLE.read_text())
    fresh = armk.measure(tmp_path)
    assert fresh["core_models"] == committed["core_models"]
    assert fresh["tools"]["llvm-mca"].split(".")[0] == committed["tools"]["llvm-mca"].split(".")[0]
    for name, k in fresh["kernels"].items():
        for core, c in k["cycles_per_unit"].items():
            assert c == pytest.approx(committed["kernels"][name]["cycles_per_unit"][core], rel=0.02), (name, core)
