"""No phone has FastRPC copy or graph-preparation measurements of its own: every spec takes
them from the sd865 calibration (pub:cpu_dsp_switch_ms, pub:dsp_graph_preparation_ms), as its
source says.  They once drifted (sd888 switches 18x cheaper than sd865's for no stated reason)."""
from __future__ import annotations

import pytest

from socsim.spec import load_soc

OTHERS = ("sd888", "sd750g", "sd855", "sd845")


@pytest.mark.parametrize("name", OTHERS)
def test_copy_and_preparation_are_the_sd865_calibration(name):
    ref = load_soc("sd865").fastrpc
    rpc = load_soc(name).fastrpc
    assert (rpc.copy_gbs, rpc.graph_prep_us_per_op, rpc.graph_prep_us_per_mb) == \
        (ref.copy_gbs, ref.graph_prep_us_per_op, ref.graph_prep_us_per_mb)
