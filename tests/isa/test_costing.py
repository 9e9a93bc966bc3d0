"""The costing contract used by the engine (isa.kernels.costing.profile_op)."""
import pytest

from isa.kernels.costing import KINDS, KernelProfile, profile_op

VGG_CONV = dict(batch=1, cin=128, h=56, w=56, cout=128, kh=3, kw=3, stride=1, pad=1)

PARAMS = {
    "gemm": dict(m=64, k=256, n=128),
    "conv2d": VGG_CONV,
    "dwconv2d": dict(batch=1, c=32, h=56, w=56, kh=3, kw=3, stride=2, pad=1),
    "conv2d_wgrad": dict(batch=2, cin=32, h=28, w=28, cout=32, kh=3, kw=3, stride=1, pad=1),
    "conv2d_dgrad": dict(batch=1, cin=32, h=28, w=28, cout=64, kh=3, kw=3, stride=2, pad=1),
    "requant_dynamic": dict(n=100352),
    "requant_static": dict(n=100352),
    "maxpool": dict(batch=1, c=64, h=56, w=56, k=2, stride=2),
    "relu": dict(n=100352),
    "reducemax": dict(n=100352),
}


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_profiles(kind):
    p = profile_op(kind, **PARAMS[kind])
    assert isinstance(p, KernelProfile) and p.kind == kind
    assert p.compute_cycles >= p.packets > 0
    assert p.tiles_emulated >= 1
    if kind == "requant_static":   # an epilogue delta: nothing extra loaded, int8 replaces int32 stores
        assert p.bytes_loaded == 0 and p.bytes_stored < 0
    else:
        assert p.bytes_loaded > 0
    assert all(v >= 0 for v in p.stall_cycles.values())
    assert p.compute_cycles == p.packets + sum(p.stall_cycles.values()) or kind in ("maxpool",)
    assert profile_op(kind, **PARAMS[kind]) is p          # memoised


def test_macs_and_peak_rate():
    p = profile_op("conv2d", **VGG_CONV)
    assert p.macs == 56 * 56 * 128 * 128 * 9
    assert 128 < p.macs / p.compute_cycles <= 256           # vrmpy peak is 256 MAC/cycle per context


def test_dynamic_requant_costs_at_least_twice_static_from_the_kernels():
    """VGG-16 conv3 output (256 x 56 x 56): the dynamic rescale's two extra passes over the stored
    int32 tensor vs the static shift fused into the producer's epilogue (docs/seeds.md: about 2x)."""
    n = 256 * 56 * 56
    d, s = profile_op("requant_dynamic", n=n), profile_op("requant_static", n=n)
    assert d.compute_cycles / s.compute_cycles >= 2
    assert d.bytes_loaded >= 2 * 4 * n                       # two reloads of the int32 tensor


def test_static_requant_is_the_epilogue_delta():
    from isa.hvx import analyze
    from isa.kernels import gemm
    n = 100352
    s = profile_op("requant_static", n=n)
    tiles = -(-n // (gemm.MR * gemm.NCOL))
    for k in (8, 64, 1000):                                  # the delta does not depend on the producer's K
        fused = analyze(gemm.build_gemm_tile(k, "requant_static"))
        plain = analyze(gemm.build_gemm_tile(k, "int32"))
        assert s.compute_cycles == tiles * (fused.cycles - plain.cycles)
    assert s.bytes_stored == tiles * (gemm.MR * 128 - gemm.MR * gemm.NCOL * 4)
    assert 0 < s.compute_cycles < profile_op("requant_dynamic", n=n).compute_cycles


def test_scaling_with_batch_and_pairing():
    a = profile_op("conv2d", **dict(VGG_CONV, batch=1))
    b = profile_op("conv2d", **dict(VGG_CONV, batch=2))
    assert b.compute_cycles == 2 * a.compute_cycles
    paired = profile_op("conv2d", **VGG_CONV, paired=True)
    assert paired.compute_cycles > a.compute_cycles


def test_unknown_kind():
    with pytest.raises(ValueError):
        profile_op("softmax", n=3)


def test_a_layer_at_another_batch_reuses_its_emulated_tile_and_costs_the_same():
    """The tile programs of conv/dwconv/dgrad do not depend on the batch, only their count does:
    profiling a layer at a second batch size emulates nothing new, and the profile equals one
    computed from scratch."""
    from isa.kernels import costing

    layer = dict(cin=24, h=12, w=12, cout=40, kh=3, kw=3, stride=2, pad=1)
    profile_op("conv2d", batch=2, **layer)
    before = costing._tile.cache_info()
    p3 = profile_op("conv2d", batch=3, **layer)
    after = costing._tile.cache_info()
    assert after.misses == before.misses and after.hits > before.hits
    costing._tile.cache_clear()
    costing._profile.cache_clear()
    fresh = profile_op("conv2d", batch=3, **layer)
    assert fresh is not p3 and fresh == p3
    one, two = (profile_op("conv2d", batch=b, **layer) for b in (1, 2))
    assert p3.compute_cycles - two.compute_cycles == two.compute_cycles - one.compute_cycles > 0  # linear in the batch
    assert p3.macs == 3 * one.macs
