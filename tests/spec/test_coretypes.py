"""A fitted kernel efficiency is a property of the core type: every spec with that core takes it,
and a spec cannot override it (that would be a per-phone correction)."""
from __future__ import annotations

import pytest
import yaml

from socsim.spec import list_socs, load_soc, soc_specs_dir
from socsim.spec.coretypes import FP32_EFFICIENCY
from socsim.spec.soc import SocSpec


@pytest.mark.parametrize("name", sorted(list_socs()))
def test_every_listed_core_type_takes_its_fitted_efficiency(name):
    for cl in load_soc(name).cpu.clusters:
        if cl.core_type in FP32_EFFICIENCY:
            assert cl.fp32_efficiency == FP32_EFFICIENCY[cl.core_type], (name, cl.name)


def test_the_a55_value_is_shared_by_every_phone():
    a55 = {n: [c.fp32_efficiency for c in load_soc(n).cpu.clusters if c.core_type == "cortex-a55"]
           for n in list_socs()}
    assert all(v == [FP32_EFFICIENCY["cortex-a55"]] for v in a55.values() if v)
    assert sum(1 for v in a55.values() if v) >= 5


def test_a_spec_cannot_override_a_fitted_core_type():
    raw = yaml.safe_load((soc_specs_dir() / "sd865.yaml").read_text())
    raw["cpu"]["clusters"][0]["fp32_efficiency"] = 0.5   # the A55 cluster
    with pytest.raises(ValueError, match="core type's fitted value"):
        SocSpec.model_validate(raw)
    raw["cpu"]["clusters"][0]["fp32_efficiency"] = FP32_EFFICIENCY["cortex-a55"]   # the same value is fine
    SocSpec.model_validate(raw)


@pytest.mark.parametrize("core_type", ["", "cortex-z9"])
def test_a_core_type_without_a_fitted_value_asks_for_fp32_efficiency_by_name(tmp_path, core_type):
    # hypothesis found it (tests/spec/test_loader_properties.py: sd865's mid core_type set to ''):
    # the error named only fp32_efficiency, not the core type that made it required
    from socsim.errors import InputError

    raw = yaml.safe_load((soc_specs_dir() / "sd865.yaml").read_text())
    raw["cpu"]["clusters"][1]["core_type"] = core_type
    p = tmp_path / "soc.yaml"
    p.write_text(yaml.safe_dump(raw, sort_keys=False))
    with pytest.raises(InputError) as e:
        load_soc(str(p))
    assert e.value.field.startswith("cpu.clusters.1") and "core_type" in e.value.message
    raw["cpu"]["clusters"][1]["fp32_efficiency"] = 0.5   # given, the spec loads
    SocSpec.model_validate(raw)
