"""Every INT8 training kernel is bit-exact against its plain-numpy reference on random shapes."""
import numpy as np
from hypothesis import given, settings, strategies as st

from isa.kernels import conv, eltwise, gemm, reference as ref, wgrad

SETTINGS = settings(max_examples=8, deadline=None, derandomize=True)


def _i8(rng, shape):
    return rng.integers(-128, 128, shape).astype(np.int8)


@SETTINGS
@given(m=st.integers(1, 9), k=st.integers(1, 70), n=st.integers(1, 260), seed=st.integers(0, 2 ** 16))
def test_gemm(m, k, n, seed):
    rng = np.random.default_rng(seed)
    a, b = _i8(rng, (m, k)), _i8(rng, (k, n))
    c, t = gemm.gemm_hvx(a, b)
    assert (c == ref.gemm(a, b)).all()
    assert t.cycles > 0


def test_gemm_whole_tiles_and_strided_inputs():
    """Shapes that fill whole tiles (A and B used without padding copies), inputs that are views
    with strides; pack_b (one panel) is pack_panels' first panel."""
    rng = np.random.default_rng(5)
    a, b = _i8(rng, (256, 8)).T, _i8(rng, (512, 256))[::2]          # 8 x 256, 256 x 256
    c, _ = gemm.gemm_hvx(a, b)
    assert (c == ref.gemm(a, b)).all()
    k4 = gemm.kgroups(256)
    assert (gemm.pack_b(b[:, :128], k4) == gemm.pack_panels(b, k4)[0].reshape(k4, 4, 32, 4)).all()


def test_gemm_extremes():
    a = np.full((4, 40), -128, np.int8)
    b = np.full((40, 128), -128, np.int8)
    assert (gemm.gemm_hvx(a, b)[0] == 40 * 128 * 128).all()
    assert (gemm.gemm_hvx(a, -b - 1)[0] == ref.gemm(a, -b - 1)).all()


@SETTINGS
@given(m=st.integers(1, 9), k=st.integers(1, 70), n=st.integers(1, 260), shift=st.integers(0, 24),
       seed=st.integers(0, 2 ** 16))
def test_gemm_static_requant_epilogue(m, k, n, shift, seed):
    """The known shift applied to the accumulators in registers equals numpy's NITI requant."""
    rng = np.random.default_rng(seed)
    a, b = _i8(rng, (m, k)), _i8(rng, (k, n))
    c, _ = gemm.gemm_hvx(a, b, shift=shift)
    assert c.dtype == np.int8 and (c == ref.requant(ref.gemm(a, b), shift)).all()


def test_gemm_static_requant_extremes():
    a = np.full((4, 40), -128, np.int8)
    b = np.full((40, 128), -128, np.int8)
    for shift in (0, 1, 7, 16, 20, 31):
        for bb in (b, -b - 1):
            assert (gemm.gemm_hvx(a, bb, shift=shift)[0] == ref.requant(ref.gemm(a, bb), shift)).all()


conv_shape = dict(n=st.integers(1, 2), cin=st.integers(1, 9), h=st.integers(3, 12), w=st.integers(3, 12),
                  cout=st.integers(1, 9), k=st.sampled_from([1, 3]), stride=st.sampled_from([1, 2]),
                  seed=st.integers(0, 2 ** 16))


@SETTINGS
@given(**conv_shape)
def test_conv2d(n, cin, h, w, cout, k, stride, seed):
    rng = np.random.default_rng(seed)
    pad = k // 2
    x, wt = _i8(rng, (n, cin, h, w)), _i8(rng, (cout, cin, k, k))
    y, _ = conv.conv2d_hvx(x, wt, stride, pad)
    r = ref.conv2d(x, wt, stride, pad)
    assert y.shape == r.shape and (y == r).all()


@SETTINGS
@given(**conv_shape, shift=st.integers(0, 20))
def test_conv2d_static_requant_epilogue(n, cin, h, w, cout, k, stride, seed, shift):
    rng = np.random.default_rng(seed)
    pad = k // 2
    x, wt = _i8(rng, (n, cin, h, w)), _i8(rng, (cout, cin, k, k))
    y, _ = conv.conv2d_hvx(x, wt, stride, pad, shift=shift)
    r = ref.requant(ref.conv2d(x, wt, stride, pad), shift)
    assert y.dtype == np.int8 and y.shape == r.shape and (y == r).all()


@SETTINGS
@given(**conv_shape)
def test_conv2d_dgrad(n, cin, h, w, cout, k, stride, seed):
    rng = np.random.default_rng(seed)
    pad = k // 2
    wt = _i8(rng, (cout, cin, k, k))
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    dy = _i8(rng, (n, cout, oh, ow))
    dx, _ = conv.conv2d_dgrad_hvx(dy, wt, (h, w), stride, pad)
    r = ref.conv2d_dgrad(dy, wt, (h, w), stride, pad)
    assert dx.shape == r.shape and (dx == r).all()


@SETTINGS
@given(**conv_shape)
def test_conv2d_wgrad(n, cin, h, w, cout, k, stride, seed):
    rng = np.random.default_rng(seed)
    pad = k // 2
    x = _i8(rng, (n, cin, h, w))
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    dy = _i8(rng, (n, cout, oh, ow))
    dw, _ = wgrad.conv2d_wgrad_hvx(x, dy, k, k, stride, pad)
    assert (dw == ref.conv2d_wgrad(x, dy, k, k, stride, pad)).all()


@SETTINGS
@given(n=st.integers(1, 2), c=st.integers(1, 5), h=st.integers(3, 20), w=st.integers(3, 20),
       k=st.sampled_from([1, 3]), stride=st.sampled_from([1, 2]), seed=st.integers(0, 2 ** 16))
def test_dwconv2d(n, c, h, w, k, stride, seed):
    rng = np.random.default_rng(seed)
    x, wt = _i8(rng, (n, c, h, w)), _i8(rng, (c, k, k))
    y, _ = conv.dwconv2d_hvx(x, wt, stride, k // 2)
    r = ref.dwconv2d(x, wt, stride, k // 2)
    assert y.shape == r.shape and (y == r).all()


@SETTINGS
@given(n=st.integers(1, 700), bits=st.integers(0, 31), seed=st.integers(0, 2 ** 16))
def test_requant_dynamic_and_static(n, bits, seed):
    rng = np.random.default_rng(seed)
    x = (rng.integers(-2 ** 31, 2 ** 31, (3, n)) >> (31 - bits)).astype(np.int32)
    x[2, 0] = -2 ** 31 if bits == 31 else x[2, 0]
    y, s, td = eltwise.requant_hvx(x)
    for i in range(3):
        yr, sr = ref.requant_dynamic(x[i])
        assert s[i] == sr and (y[i] == yr).all()
    y2, _, ts = eltwise.requant_hvx(x, shift=s)
    assert (y2 == y).all()
    assert td.cycles > ts.cycles


@SETTINGS
@given(n=st.integers(1, 600), seed=st.integers(0, 2 ** 16))
def test_relu_and_reducemax(n, seed):
    rng = np.random.default_rng(seed)
    x = _i8(rng, (3, n))
    x[1] = -128
    y, _ = eltwise.relu_hvx(x)
    assert (y == ref.relu(x)).all()
    m, _ = eltwise.reducemax_hvx(x)
    assert m.tolist() == [ref.reducemax(r) for r in x]


@SETTINGS
@given(n=st.integers(1, 2), c=st.integers(1, 4), h=st.integers(3, 20), w=st.integers(3, 20),
       kst=st.sampled_from([(2, 2), (3, 2), (3, 1), (2, 1)]), seed=st.integers(0, 2 ** 16))
def test_maxpool(n, c, h, w, kst, seed):
    k, s = kst
    rng = np.random.default_rng(seed)
    x = _i8(rng, (n, c, h, w))
    y, _ = eltwise.maxpool_hvx(x, k, s)
    r = ref.maxpool(x, k, s)
    assert y.shape == r.shape and (y == r).all()
