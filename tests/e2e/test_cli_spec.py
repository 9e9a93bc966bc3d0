"""``socsim spec schema|template|check``: the schema is the pydantic models', the template
validates as written and runs the quick-start, a bad value exits 2 naming file, line and field."""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cli_helpers import invoke  # noqa: E402

from socsim.spec import soc_specs_dir  # noqa: E402
from socsim.spec.soc import SocSpec  # noqa: E402

QUICKSTART = Path(__file__).parents[2] / "workloads" / "quickstart.yaml"


def test_schema_is_the_soc_specs_json_schema():
    r = invoke("spec", "schema")
    assert r.exit_code == 0
    assert json.loads(r.output) == json.loads(json.dumps(SocSpec.model_json_schema()))


def test_template_names_every_field_with_its_unit_and_checks(tmp_path):
    r = invoke("spec", "template", "--name", "myphone")
    assert r.exit_code == 0
    text = r.output
    for field in ("cpu:", "clusters:", "l1d:", "dram:", "bandwidth_gbs:", "battery:", "thermal:"):
        assert field in text
    assert "bandwidth_gbs: 51.2   # float; GB/s" in text and "freq_mhz" in text
    assert "look in" in text   # where to find each block's numbers
    p = tmp_path / "myphone.yaml"
    p.write_text(text)
    r = invoke("spec", "check", str(p))
    assert r.exit_code == 0, r.output
    assert "ok: SoC spec myphone" in r.output and "GFLOP/s fp32" in r.output and "GB/s" in r.output
    r = invoke("run", "--soc", str(p), str(QUICKSTART), "--set", "batches=2", "--deterministic")
    assert r.exit_code == 0, r.output


def test_check_names_a_bad_value(tmp_path):
    text = invoke("spec", "template").output.replace("bandwidth_gbs: 51.2", "bandwidth_gbs: -1")
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    r = invoke("spec", "check", str(p))
    assert r.exit_code == 2
    assert "bad.yaml:" in r.output and "dram.bandwidth_gbs" in r.output and "-1" in r.output


def test_every_shipped_spec_checks():
    for p in sorted(soc_specs_dir().glob("*.yaml")):
        r = invoke("spec", "check", str(p))
        assert r.exit_code == 0, (p, r.output)
