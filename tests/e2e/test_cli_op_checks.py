"""``socsim op``: ``--freq`` is checked against the OPPs of the unit it runs on (exit 2 naming
``--freq`` with the range), min|mid|max are that unit's lowest/middle/highest OPP, a frequency
between OPPs is floored to one, the DSP defaults to the SoC's training clock and the GPU honours
``--freq``; negative or zero shape options are exit 2 naming the option (socsim.tools.op)."""
from __future__ import annotations

import json

import pytest

from cli_helpers import invoke
from socsim.errors import InputError
from socsim.tools.op import time_op


def _op(*args: str):
    r = invoke("op", "--soc", "sd865", *args, "--json", "-")
    return r, (json.loads(r.output[r.output.index("{"):]) if r.exit_code == 0 else None)


@pytest.mark.parametrize("unit,freq,needle", [
    ("dsp", "-5", "500-1497 MHz"), ("dsp", "0", "500-1497 MHz"), ("dsp", "99999", "500-1497 MHz"),
    ("dsp", "fast", "500-1497 MHz"), ("dsp", "nan", "500-1497 MHz"),
    ("gpu", "1", "257-587 MHz"), ("gpu", "-5", "257-587 MHz"), ("gpu", "9999", "257-587 MHz"),
    ("cpu", "0", "710.4"), ("cpu", "-5", "710.4"), ("cpu", "99999", "2419.2"), ("cpu", "fast", "710.4-2419.2"),
])
def test_freq_outside_the_units_opps_is_exit_2_naming_freq(unit, freq, needle):
    r, _ = _op("--unit", unit, "conv2d", f"--freq={freq}")
    assert r.exit_code == 2, r.output
    assert "--freq" in r.output and needle in r.output and "internal error" not in r.output


@pytest.mark.parametrize("unit,freq,mhz", [
    ("dsp", None, 500.0),            # default: the training clock, not the top OPP
    ("dsp", "min", 500.0), ("dsp", "mid", 1402.0), ("dsp", "max", 1497.0),
    ("dsp", "1171", 1171.0), ("dsp", "1300", 1171.0),   # between OPPs: floored
    ("gpu", None, 587.0), ("gpu", "min", 257.0), ("gpu", "mid", 427.0), ("gpu", "400", 345.0),
    ("cpu", None, 2419.2), ("cpu", "min", 710.4),
])
def test_freq_picks_the_units_opp(unit, freq, mhz):
    r, res = _op("--unit", unit, "conv2d", *(["--freq", freq] if freq else []))
    assert r.exit_code == 0, r.output
    assert res["freq_mhz"] == pytest.approx(mhz)


def test_gpu_time_follows_its_frequency():
    _, lo = _op("--unit", "gpu", "conv2d", "--freq", "min")
    _, hi = _op("--unit", "gpu", "conv2d", "--freq", "max")
    assert lo["time_s"] > hi["time_s"] > 0


def test_time_op_default_dsp_clock_and_explicit_max():
    assert time_op("sd865", "dsp", "conv2d")["freq_mhz"] == 500.0
    assert time_op("sd865", "dsp", "conv2d", freq="max")["freq_mhz"] == 1497.0
    with pytest.raises(InputError) as e:
        time_op("sd865", "dsp", "conv2d", freq=-5)
    assert e.value.field == "--freq"


@pytest.mark.parametrize("opt,value", [("--pad", "-1"), ("--stride", "0"), ("--stride", "-2"), ("--kernel", "0"),
                                       ("--batch", "0"), ("--batch", "-4"), ("--out-channels", "0"),
                                       ("--out-channels", "-3")])
def test_nonpositive_shape_options_are_exit_2_naming_the_option(opt, value):
    r, _ = _op("conv2d", opt, value)
    assert r.exit_code == 2, r.output
    assert f"'{opt}'" in r.output and value in r.output and "internal error" not in r.output


def test_zero_pad_is_fine():
    r, res = _op("conv2d", "--pad", "0")
    assert r.exit_code == 0, r.output
    assert res["params"]["oh"] == 30


def test_an_op_larger_than_the_phones_memory_is_an_input_error():
    r = invoke("op", "--soc", "sd865", "conv2d", "--batch", "100000000")
    assert r.exit_code == 2 and "more than the 8 GiB DRAM of sd865" in r.output and "--batch" in r.output


@pytest.mark.parametrize("unit", ["cpu", "dsp", "gpu"])
def test_gemm_times_on_every_unit(unit):
    """gemm from `socsim op` carries the shape fields a model's linear layer has (batch, count)."""
    r, res = _op("--unit", unit, "gemm", "--in", "512", "--batch", "32", "--dtype", "int8" if unit == "dsp" else "fp32")
    assert r.exit_code == 0, r.output
    assert res["time_s"] > 0


@pytest.mark.parametrize("unit", ["dsp", "gpu"])
def test_cores_off_the_cpu_is_exit_2(unit):
    r, _ = _op("--unit", unit, "conv2d", "--cores", "little4")
    assert r.exit_code == 2 and "--cores" in r.output and f"--unit {unit}" in r.output, r.output
