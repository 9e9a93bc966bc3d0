"""op_memory: hierarchy from the spec, memoisation, DSP cache cliff, DRAM sharing."""
import pytest

from socsim.hw import dram
from socsim.hw.memory import op_memory
from socsim.spec import load_soc
from socsim.workload.ops import Op, make_params


@pytest.fixture(scope="module")
def soc():
    return load_soc("sd865")


def _conv(b, hw):
    return Op("c", "conv2d", "forward", "l", "int8", make_params(batch=b, cin=64, h=hw, w=hw, cout=64, kh=3, kw=3,
                                                                  stride=1, pad=1, groups=1, oh=hw, ow=hw))


def test_dsp_cache_cliff(soc):
    small = op_memory(_conv(4, 32), "dsp", soc, threads=4, batch=4)
    big = op_memory(_conv(32, 32), "dsp", soc, threads=4, batch=32)
    assert small.levels[0].hit_rate > 0.95 and big.levels[0].hit_rate < 0.8
    assert big.dram_bytes > 50 * small.dram_bytes        # re-sweeps from DRAM, 8x the batch
    assert small.scratch_accesses == 0 or small.scratch_accesses > 0   # weights live in VTCM


def test_memoised_and_levels(soc):
    op = _conv(2, 16)
    a = op_memory(op, "cpu", soc, cores=(4, 5))
    assert a is op_memory(op, "cpu", soc, cores=(4, 5))
    assert [lv.name for lv in a.levels] == ["L1D", "L2", "L3", "SLC"]
    assert set(a.hit_rates()) == {"L1D", "L2", "L3", "SLC"}


def test_dram_share(soc):
    d = soc.dram
    alone = dram.share(d, "cpu-big", {"cpu-big": 1}).bandwidth_bps
    four = dram.share(d, "cpu-big", {"cpu-big": 4}).bandwidth_bps
    with_dsp = dram.share(d, "cpu-big", {"cpu-big": 4, "dsp": 1}).bandwidth_bps
    assert four < alone and with_dsp <= four
    assert 4 * four <= dram.achievable_bps(d, 4) * 1.0001
    assert dram.energy_j(d, 1e9) == pytest.approx(d.energy_pj_per_byte * 1e-3)


# ----------------------------------------------------------------------------- simulation reuse

from hypothesis import given, settings, strategies as hs  # noqa: E402

from socsim.hw import memory  # noqa: E402


def _gemm(m, k=256, n=64):
    return Op("fc", "gemm", "forward", "fc", "fp32", make_params(batch=m, m=m, k=k, n=n, count=1),
              bytes_read=(m * k + k * n) * 4, bytes_written=m * n * 4)


def _fresh():
    memory._cpu_memory.cache_clear()


def test_idle_threads_reuse_the_simulation_exactly(soc, no_store, monkeypatch):
    """A 16-row GEMM has two 12-pixel tiles: on cores (4, 5, 6) the third thread idles, so its
    profile is the one of cores (4, 5) (the busy threads' caches), reused, and equal to the
    one computed from scratch."""
    _fresh()
    op = _gemm(16)
    two = op_memory(op, "cpu", soc, cores=(4, 5))
    runs = []
    real = memory._simulate
    monkeypatch.setattr(memory, "_simulate", lambda *a: runs.append(1) or real(*a))
    three = op_memory(op, "cpu", soc, cores=(4, 5, 6))
    assert runs == []                                     # served by the reuse
    assert three.levels == two.levels and three.dram_bytes == two.dram_bytes
    assert three.work_items == 3 * two.work_items // 2    # the plan's own figures stay per thread count
    _fresh()
    assert op_memory(op, "cpu", soc, cores=(4, 5, 6)) == three   # from scratch: identical
    assert runs == [1]


def test_busy_threads_on_other_caches_are_simulated_again(soc, no_store, monkeypatch):
    """Reuse needs the busy threads' own caches to match: the prime core's larger L2 (core 7)
    and the little cores' smaller caches are simulated."""
    _fresh()
    op = _gemm(16)
    op_memory(op, "cpu", soc, cores=(4, 5))
    runs = []
    real = memory._simulate
    monkeypatch.setattr(memory, "_simulate", lambda *a: runs.append(1) or real(*a))
    op_memory(op, "cpu", soc, cores=(4, 7))
    op_memory(op, "cpu", soc, cores=(0, 1))
    op_memory(op, "cpu", soc, cores=(4,))                 # one thread takes both tiles
    assert len(runs) == 3


@settings(max_examples=25, deadline=None)
@given(m=hs.integers(1, 60), k=hs.sampled_from([16, 100, 512]), n=hs.sampled_from([8, 24, 96]),
       cores=hs.sampled_from([(4,), (4, 5), (4, 5, 6), (0, 1, 2, 3), (0, 1, 2, 3, 4, 5, 6, 7)]),
       other=hs.sampled_from([(4,), (4, 5), (4, 5, 6), (0, 1, 2, 3), (0, 1, 2, 3, 4, 5, 6, 7)]))
def test_a_reused_simulation_equals_one_from_scratch(soc, no_store, m, k, n, cores, other):
    """Whatever ran before in the process, a profile equals the one computed in a fresh process."""
    op = _gemm(m, k, n)
    _fresh()
    scratch = op_memory(op, "cpu", soc, cores=cores, budget=20_000)
    _fresh()
    op_memory(op, "cpu", soc, cores=other, budget=20_000)
    memory._cpu_memory.cache_clear()
    assert op_memory(op, "cpu", soc, cores=cores, budget=20_000) == scratch


# ----------------------------------------------------------------------------- profiles by plan

def _dw(kind, c, hw, stride=1, batch=2):
    oh = (hw + 2 - 3) // stride + 1
    return Op("d", kind, "forward", "l", "fp32",
              make_params(batch=batch, cin=c, cout=c, groups=c, h=hw, w=hw, kh=3, kw=3, stride=stride, pad=1,
                          oh=oh, ow=oh),
              bytes_read=batch * c * hw * hw * 4, bytes_written=batch * c * oh * oh * 4)


def _pointwise(kind, cin, cout, hw=14, batch=2):
    return Op("p", kind, "forward", "l", "fp32",
              make_params(batch=batch, cin=cin, cout=cout, groups=1, h=hw, w=hw, kh=1, kw=1, stride=1, pad=0,
                          oh=hw, ow=hw),
              bytes_read=batch * cin * hw * hw * 4, bytes_written=batch * cout * hw * hw * 4)


def _plan_of_op(op, threads):
    kind, dtype, params = memory._stream_key(op)
    return memory._plan_of(kind, dtype, params, int(op.bytes_read), int(op.bytes_written), "cpu", threads)


@pytest.mark.parametrize("first,second", [
    (_dw("dwconv2d", 32, 28), _dw("dwconv2d_dgrad", 32, 28)),               # stride 1: dY is X's shape
    (_pointwise("conv2d", 24, 64), _pointwise("conv2d_dgrad", 64, 24)),      # 1x1: cin and cout swapped
])
def test_ops_with_one_plan_share_its_simulation_exactly(soc, no_store, monkeypatch, first, second):
    """Two ops whose stream keys differ but whose plans are one (a stride-1 depthwise layer and
    its error gradient, a 1x1 conv and the error gradient of the conv with cin and cout swapped)
    are simulated once; the second's profile equals the one computed from scratch."""
    assert memory._stream_key(first) != memory._stream_key(second)
    assert memory._plan_key(_plan_of_op(first, 2)) == memory._plan_key(_plan_of_op(second, 2))
    _fresh()
    op_memory(first, "cpu", soc, cores=(4, 5), budget=50_000)
    runs = []
    real = memory._simulate
    monkeypatch.setattr(memory, "_simulate", lambda *a: runs.append(1) or real(*a))
    shared = op_memory(second, "cpu", soc, cores=(4, 5), budget=50_000)
    assert runs == []
    _fresh()                                                  # clears the profiles by plan too
    assert op_memory(second, "cpu", soc, cores=(4, 5), budget=50_000) == shared
    assert runs == [1]


def test_a_strided_gradient_has_a_plan_of_its_own(soc, no_store):
    """Where the plans differ (stride 2: the gradient is a stride-1 pass over dY's shape), the
    keys differ and nothing is shared."""
    a, b = _plan_of_op(_dw("dwconv2d", 32, 28, 2), 2), _plan_of_op(_dw("dwconv2d_dgrad", 32, 28, 2), 2)
    assert memory._plan_key(a) != memory._plan_key(b)


@settings(max_examples=20, deadline=None)
@given(c=hs.sampled_from([8, 16, 36]), hw=hs.sampled_from([7, 14, 28]), stride=hs.sampled_from([1, 2]),
       cores=hs.sampled_from([(4,), (4, 5), (0, 1, 2), (4, 5, 6, 7)]))
def test_a_profile_by_plan_equals_one_from_scratch(soc, no_store, c, hw, stride, cores):
    """Whichever op of a plan ran first, the other's profile is the one computed alone."""
    fwd, grad = _dw("dwconv2d", c, hw, stride), _dw("dwconv2d_dgrad", c, hw, stride)
    _fresh()
    alone = op_memory(grad, "cpu", soc, cores=cores, budget=20_000)
    _fresh()
    op_memory(fwd, "cpu", soc, cores=cores, budget=20_000)
    assert op_memory(grad, "cpu", soc, cores=cores, budget=20_000) == alone
