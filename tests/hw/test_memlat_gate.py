"""The memory-latency governors' gate (socsim.spec.soc.Uncore.ratio_ceil, governor_memlat.c): a
cluster's monitor votes its table clock only while its cores run at most ``ratio_ceil``
instructions per cache miss; compute-bound code leaves the L3/LLCC/DDR at the other votes or
their floor.  sd855's spec states the vendor values; the tests set them explicitly, so that they
hold whatever the spec says."""
from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from socsim.errors import InputError
from socsim.hw.cost import CpuConfig
from socsim.hw.cpu import cpu_cost, instructions_per_miss, op_instructions, uncore_clocks
from socsim.hw.memory import op_memory
from socsim.spec import load_soc
from socsim.workload.ops import Op

ROOT = Path(__file__).resolve().parents[2]
# the sm8150 vendor post-boot values (docs/modeling.md, "Attributable power")
CEIL = {"l3": {"little": 400, "mid": 4000, "prime": 20000},
        "llcc": {"little": 400, "mid": 400, "prime": 400}, "ddr": {"little": 400, "mid": 400, "prime": 400}}


@pytest.fixture(scope="module")
def gated():
    soc = load_soc("sd855")
    unc = soc.cpu.uncore.model_copy(update={"ratio_ceil": CEIL})
    return soc.model_copy(update={"cpu": soc.cpu.model_copy(update={"uncore": unc})})


def test_no_instruction_count_votes_as_before(gated):
    plain = load_soc("sd855").cpu.uncore
    for which, clocks in (("ddr", {"mid": 1600}), ("l3", {"little": 600}), ("ddr", {"little": 1800, "mid": 2400})):
        assert gated.cpu.uncore.vote(which, clocks) == plain.vote(which, clocks)


def test_compute_bound_code_does_not_vote(gated):
    u = gated.cpu.uncore
    # the little cluster at 1.8 GHz: memory-bound code votes the table, compute-bound the floor
    assert u.vote("l3", {"little": 1800}, {"l2": 50, "l3": 50}) == 960
    assert u.vote("l3", {"little": 1800}, {"l2": 1000, "l3": 1000}) == u.floor("l3")
    # the gold cluster's L3 monitor has a ceiling of 4000: it still votes at 1000 per miss
    assert u.vote("l3", {"mid": 2400}, {"l2": 1000, "l3": 1000}) == 1344
    assert u.vote("l3", {"mid": 2400}, {"l2": 5000, "l3": 5000}) == u.floor("l3")
    # DDR: the gold cluster's compute floor (arm-cpu-mon) votes whatever the misses
    assert u.vote("ddr", {"mid": 2400}, {"l2": 5000, "l3": 5000}) == u.lookup(u.ddr_floor_mhz["mid"], 2400)
    assert u.vote("ddr", {"little": 1800}, {"l2": 5000, "l3": 5000}) == u.floor("ddr")


@given(ipm=st.floats(1.0, 1e6), f=st.sampled_from([600.0, 1200.0, 1800.0]))
def test_a_gated_vote_never_exceeds_the_ungated_one(gated, ipm, f):
    u = gated.cpu.uncore
    for which in ("l3", "llcc", "ddr"):
        assert u.vote(which, {"little": f}, {"l2": ipm, "l3": ipm}) <= u.vote(which, {"little": f})


def _fc():
    return Op(name="fc", kind="gemm", phase="forward", layer="fc", dtype="fp32",
              params=(("k", 4096), ("m", 16), ("n", 4096)), macs=16 * 4096 * 4096,
              bytes_read=4 * (16 * 4096 + 4096 * 4096), bytes_written=4 * 16 * 4096, out_bytes=4 * 16 * 4096)


def test_instructions_per_miss_of_a_streaming_fc(gated):
    op = _fc()
    inst = op_instructions(op)
    # one FMLA per 4 MACs and the 12x8 tile's loads and loop control, plus the packing
    assert inst >= 16 * 4096 * 4096 / 4 * (1 + 6 / 24)
    ipm = instructions_per_miss(op, op_memory(op, "cpu", gated, (4,)))
    assert 0 < ipm["l2"] <= ipm["l3"] < math.inf       # every L3 miss was an L2 miss first
    # the weights stream from DRAM (64 MB for 16 rows): memory-latency-bound, so it votes
    cfg = CpuConfig(cores=(4,), freqs_mhz=(("little", 600.0), ("mid", 1600.0), ("prime", 1600.0)))
    assert uncore_clocks(gated, cfg, (4,), ipm)["ddr"] == gated.cpu.uncore.vote("ddr", {"mid": 1600})
    assert dict(cpu_cost(gated, op, cfg).detail)["ddr_mhz"] >= gated.cpu.uncore.vote("ddr", {"mid": 1600})


@pytest.mark.parametrize("bad, field", [({"l4": {"mid": 400}}, "l4"), ({"l3": {"gold": 400}}, "gold"),
                                        ({"ddr": {"mid": -1}}, "ratio_ceil")])
def test_bad_ratio_ceil_is_bad_input(tmp_path, bad, field):
    data = yaml.safe_load((ROOT / "soc_specs" / "sd855.yaml").read_text())
    data["cpu"]["uncore"]["ratio_ceil"] = bad
    p = tmp_path / "soc.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(InputError) as e:
        load_soc(str(p))
    assert field in str(e.value)
