"""ZoneReader's gathered read (the node columns and each virtual zone's sensors in one indexing
each) gives numpy's per-zone read bit for bit, on every shipped phone."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from socsim.hw.thermal import ThermalNetwork, ZoneReader
from socsim.spec import load_soc

PHONES = ["sd845", "sd855", "sd865", "sd888", "sd8gen2"]


@pytest.mark.parametrize("phone", PHONES)
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 64), view=st.sampled_from(["whole", "row", "strided"]))
def test_gathered_read_is_the_per_zone_read(phone, seed, steps, view):
    soc = load_soc(phone)
    net = ThermalNetwork(soc.thermal, 25.0)
    zones = [z for z in soc.thermal.zones if z.node != soc.thermal.ambient_node]
    fast = ZoneReader(net, zones)
    slow = ZoneReader(net, zones)
    slow._gather = False
    temps = 20.0 + 80.0 * np.random.default_rng(seed).random((steps, len(net.node_names)))
    # as the engine reads them: a part's block, its last row (``temps[None, :]``), a strided view
    temps = {"whole": temps, "row": temps[-1][None, :], "strided": temps[::2]}[view]
    assert fast.read(temps).tobytes() == slow.read(temps).tobytes()


def test_sd865_reads_through_the_gather():
    soc = load_soc("sd865")
    zones = [z for z in soc.thermal.zones if z.node != soc.thermal.ambient_node]
    r = ZoneReader(ThermalNetwork(soc.thermal, 25.0), zones)
    assert r._plain or r._gather
