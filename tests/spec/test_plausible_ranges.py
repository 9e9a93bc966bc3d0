"""Physically impossible SoC specs are bad input at load time (exit 2), naming the file, the
line, the field and the allowed range (docs/socs.md, Plausible ranges), not an overflow or a
277 C result at run time."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings, strategies as st

from socsim.errors import InputError
from socsim.spec import load_soc, soc_specs_dir
from socsim.spec.loader import allowed_range
from socsim.spec.soc import CacheLevel, SocSpec

from tests.e2e.cli_helpers import invoke

SD865 = (soc_specs_dir() / "sd865.yaml").read_text()
PRIME_TOP = "{freq_mhz: 2841.6, voltage_mv: 912.0}]"


def _spec(tmp_path, old: str, new: str):
    text = SD865.replace(old, new, 1)
    assert text != SD865, old
    p = tmp_path / "s.yaml"
    p.write_text(text)
    return p


@pytest.mark.parametrize("old, new, field, words", [
    (PRIME_TOP, PRIME_TOP[:-1] + ", {freq_mhz: 1e9, voltage_mv: 1000}]", r"cpu\.clusters\.2\.opps\.8\.freq_mhz",
     "<= 5,000"),
    (PRIME_TOP, PRIME_TOP[:-1] + ", {freq_mhz: 1e5, voltage_mv: 1000}]", r"cpu\.clusters\.2\.opps\.8\.freq_mhz",
     "<= 5,000"),
    (PRIME_TOP, PRIME_TOP[:-1] + ", {freq_mhz: 3000, voltage_mv: 2000}]", r"cpu\.clusters\.2\.opps\.8\.voltage_mv",
     ">= 400 and <= 1,500"),
    ("l3: {size_kb: 4096", "l3: {size_kb: 4095", r"cpu\.l3", "power-of-two number of sets"),
    ("l3: {size_kb: 4096, assoc: 16", "l3: {size_kb: 4096, assoc: 65536", r"cpu\.l3\.assoc", "<= 64"),
    ("line_bytes: 64", "line_bytes: 4096", r"cpu\.clusters\.\d\.l1d\.line_bytes", "64 to 256"),
    ("capacitance_j_per_k: 0.3", "capacitance_j_per_k: 1e-9", r"thermal\.nodes\.\d\.capacitance_j_per_k", ">= 0.001"),
])
def test_implausible_values_name_field_line_and_range(tmp_path, old, new, field, words):
    with pytest.raises(InputError) as e:
        load_soc(_spec(tmp_path, old, new))
    assert re.fullmatch(field, e.value.field), e.value.field
    assert words in e.value.message and e.value.line is not None


def test_validate_refuses_a_1e9_mhz_opp_with_exit_2(tmp_path):
    p = _spec(tmp_path, PRIME_TOP, PRIME_TOP[:-1] + ", {freq_mhz: 1e9, voltage_mv: 1000}]")
    for args in (("validate", str(p)), ("run", "--soc", str(p), "workloads/quickstart.yaml", "--quiet")):
        r = invoke(*args)
        assert r.exit_code == 2, r.output
        assert "s.yaml:" in r.output and "freq_mhz" in r.output and "allowed range" in r.output


def test_every_shipped_spec_is_within_the_ranges():
    for p in sorted(soc_specs_dir().glob("*.yaml")):
        load_soc(p)


def test_allowed_range_reads_the_declared_bounds():
    assert allowed_range(SocSpec, ("cpu", "clusters", 0, "opps", 0, "freq_mhz")) == "> 0 and <= 5,000"
    assert allowed_range(SocSpec, ("cpu", "l3", "assoc")) == ">= 1 and <= 64"
    assert allowed_range(SocSpec, ("thermal", "heat_sources", "x")) is None


@settings(max_examples=40, deadline=None)
@given(size_kb=st.floats(0.5, 65536), assoc=st.integers(1, 64), line=st.sampled_from([64, 128, 256]))
def test_a_cache_loads_only_with_a_power_of_two_sets(size_kb, assoc, line):
    sets = size_kb * 1024 / (assoc * line)
    ok = sets >= 1 and sets == int(sets) and not int(sets) & (int(sets) - 1)
    try:
        c = CacheLevel(size_kb=size_kb, assoc=assoc, line_bytes=line)
    except ValueError:
        assert not ok
    else:
        assert ok and c.size_kb * 1024 == sets * assoc * line
