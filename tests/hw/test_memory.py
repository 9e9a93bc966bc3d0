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
