"""How HVX kernels reach their activations (``dsp.activation_staging``): the V66 L2 path (Hexagon
NN, Mandheling Table 4's cache cliff) and the V68+ DMA staging into VTCM tiles (no cliff while
the DMA keeps up with HVX)."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from socsim.hw.cost import DspConfig
from socsim.hw.dsp import DMA_TILES, DspCostModel, dma_bps, vtcm_staged_bytes, walk_tile_bytes
from socsim.spec import load_soc
from socsim.spec.soc import with_activation_staging
from socsim.workload.ops import Op, make_params

from tests.e2e.cli_helpers import invoke, write_workload

CFG = DspConfig(freq_mhz=500)
V68 = load_soc("sd888")
V68_L2 = with_activation_staging(V68, "l2")


def _conv(b=32, hw=32, cin=64, cout=64, k=3, kind="conv2d", phase="forward"):
    w = cout * cin * k * k
    out = (w * 4) if phase == "weight_grad" else 4 * b * hw * hw * cout
    read = b * hw * hw * (cin + cout) if phase == "weight_grad" else b * hw * hw * cin + w
    return Op("c", kind, phase, "l", "int8",
              make_params(batch=b, cin=cin, h=hw, w=hw, cout=cout, kh=k, kw=k, stride=1, pad=k // 2, groups=1,
                          oh=hw, ow=hw),
              macs=b * cout * hw * hw * cin * k * k, bytes_read=read, bytes_written=out, weight_bytes=w)


def _per_mac(soc, b, hw):
    op = _conv(b=b, hw=hw)
    return DspCostModel(soc).cost(op, CFG).time_s / op.macs


def test_specs_default_by_generation():
    assert load_soc("sd865").dsp.activation_staging == "l2"       # Hexagon NN on V66 (Table 4)
    assert V68.dsp.activation_staging == "vtcm_dma"                 # V68 user DMA
    assert V68_L2.dsp.activation_staging == "l2" and V68_L2.dsp.vtcm_kb == V68.dsp.vtcm_kb


def test_vtcm_dma_needs_v68():
    with pytest.raises(ValueError, match="V68"):
        with_activation_staging(load_soc("sd865"), "vtcm_dma")
    soc = load_soc("sd865")
    assert with_activation_staging(soc, None) is soc and with_activation_staging(soc, "l2") is soc


def test_table4_cliff_only_on_the_l2_path():
    # Table 4's 64->64 conv at 32x32: batch 32 costs ~27x batch 4 on the V66 (the padded batch's
    # inputs no longer fit the L2, re-read per output channel); staged through VTCM by DMA the
    # latency per MAC does not rise with the batch
    cliff_l2 = _per_mac(V68_L2, 32, 32) / _per_mac(V68_L2, 4, 32)
    cliff_dma = _per_mac(V68, 32, 32) / _per_mac(V68, 4, 32)
    assert cliff_l2 > 3
    assert cliff_dma < 1.2
    # and the same HVX cycles either way: staging changes memory time only
    op = _conv()
    assert DspCostModel(V68).cost(op, CFG).cycles == DspCostModel(V68_L2).cost(op, CFG).cycles


def test_staged_bytes_sweeps_and_staying_operand():
    vtcm = 256 * 1024
    small = _conv(cin=64, cout=64)                       # 36 KB of weights: one sweep
    assert vtcm_staged_bytes(small, vtcm) == (small.bytes_read + small.bytes_written, 1)
    big = _conv(b=4, hw=8, cin=256, cout=256)            # 576 KB of weights over 128 KB halves: 5 sweeps
    acts = big.bytes_read - big.weight_bytes
    assert vtcm_staged_bytes(big, vtcm) == (acts * 5 + big.weight_bytes + big.bytes_written, 5)
    # a weight gradient keeps its int32 dW in VTCM: its size sets the sweeps, written once
    wg = _conv(b=4, hw=8, cin=128, cout=128, kind="conv2d_wgrad", phase="weight_grad")
    n, sweeps = vtcm_staged_bytes(wg, vtcm)
    assert sweeps == -(-wg.bytes_written // (vtcm // 2)) and n == wg.bytes_read * sweeps + wg.bytes_written
    # a padded batch moves the padded activations and outputs, not the weights
    n2, _ = vtcm_staged_bytes(small, 4 * 1024 * 1024, batch_scale=2.0)
    assert n2 == 2 * (small.bytes_read - small.weight_bytes) + small.weight_bytes + 2 * small.bytes_written
    # a dynamic requantisation reads its int32 input twice (reduce-max pass, then the shift)
    rq = Op("q", "requant_dynamic", "forward", "l", "int32", make_params(n=1000), bytes_read=4000, bytes_written=1000)
    assert vtcm_staged_bytes(rq, vtcm) == (2 * 4000 + 1000, 2)


def _walk(kind="transpose", batch=64, n=1 << 20, dtype="int8", **p):
    eb = 4 if dtype == "int32" else 1
    return Op("t", kind, "weight_grad", "l", dtype, make_params(batch=batch, n=n, **p),
              bytes_read=n * eb, bytes_written=n * eb)


def test_scalar_walks_are_staged_on_v68():
    # the walk's cycles are the same on both paths; staged, its memory time overlaps them
    for op in (_walk(), _walk("slice", n=1 << 21, dtype="int32")):
        a, b = DspCostModel(V68).cost(op, CFG), DspCostModel(V68_L2).cost(op, CFG)
        da, db = dict(a.detail), dict(b.detail)
        assert da["vtcm_dma"] == 1.0 and db["vtcm_dma"] == 0.0
        assert a.cycles == b.cycles and da["compute_s"] == db["compute_s"]
        assert a.time_s < b.time_s
        assert a.dram_bytes == op.bytes_read + op.bytes_written        # one pass in, one out
        assert a.time_s >= max(da["compute_s"], a.dram_bytes / dma_bps(V68) * 0.999)


def test_walk_tile_rows():
    assert walk_tile_bytes(_walk(batch=64)) == 2 * 64 * 128
    assert walk_tile_bytes(_walk("slice", batch=64)) == 2 * 128                  # a crop: row by row
    rot = Op("r", "weight_rotate", "error_grad", "l", "int8", make_params(cout=512, cin=256, kh=3, kw=3),
             bytes_read=512 * 256 * 9, bytes_written=512 * 256 * 9, weight_bytes=512 * 256 * 9)
    assert walk_tile_bytes(rot) == 2 * 512 * 128                                   # cin and cout swap
    shuf = Op("s", "channel_shuffle", "forward", "l", "int8", make_params(batch=64, n=4096, groups=4),
              bytes_read=4096, bytes_written=4096)
    assert walk_tile_bytes(shuf) == 2 * 4 * 128


def test_walk_whose_tile_does_not_fit_keeps_the_l2_path():
    # a DMA tile is a quarter of the VTCM (1 MB on the V68): a transpose gathering from 8192 rows
    # needs 2 x 8192 x 128 B = 2 MB and walks through the L2 as on V66
    big, fits = _walk(batch=8192, n=8192 * 256), _walk(batch=4096, n=4096 * 512)
    assert walk_tile_bytes(big) > V68.dsp.vtcm_kb * 1024 / DMA_TILES >= walk_tile_bytes(fits)
    a, b = DspCostModel(V68).cost(big, CFG), DspCostModel(V68_L2).cost(big, CFG)
    assert dict(a.detail)["vtcm_dma"] == 0.0 and a.time_s == b.time_s
    assert dict(DspCostModel(V68).cost(fits, CFG).detail)["vtcm_dma"] == 1.0


@settings(max_examples=25, deadline=None)
@given(kind=st.sampled_from(["transpose", "slice", "channel_shuffle"]), batch=st.sampled_from([1, 4, 64, 512]),
       n=st.integers(1 << 10, 1 << 22), groups=st.sampled_from([2, 4, 8]))
def test_staged_walk_never_slower_than_l2(kind, batch, n, groups):
    # staging moves the same bytes off the in-order contexts' miss path: never slower than
    # waiting on each miss, never faster than the walk itself
    op = _walk(kind, batch=batch, n=n, dtype="int32" if kind == "slice" else "int8", groups=groups)
    a, b = DspCostModel(V68).cost(op, CFG), DspCostModel(V68_L2).cost(op, CFG)
    assert dict(a.detail)["vtcm_dma"] == 1.0
    assert dict(a.detail)["compute_s"] <= a.time_s <= b.time_s * 1.0001


@settings(max_examples=25, deadline=None)
@given(b=st.sampled_from([1, 2, 4, 32]), hw=st.sampled_from([4, 8, 16, 32]),
       cin=st.sampled_from([16, 64, 256]), cout=st.sampled_from([16, 64, 512]))
def test_staged_time_bounds(b, hw, cin, cout):
    # overlapped DMA: never faster than the HVX compute or than moving the bytes, and the fill of
    # the first tile is always paid
    c = DspCostModel(V68).cost(_conv(b=b, hw=hw, cin=cin, cout=cout, k=1), CFG)
    d = dict(c.detail)
    assert d["vtcm_dma"] == 1.0
    assert c.time_s >= d["compute_s"]
    assert c.time_s >= c.dram_bytes / dma_bps(V68) * 0.999
    assert c.stall_s > 0


def test_workload_chooses_the_staging(tmp_path):
    # naive offload (every op the DSP runs goes there), so the DSP's memory path decides the batch
    wl = write_workload(tmp_path, precision="niti", batch_size=32, batches=1,
                        scheduler={"name": "mandheling", "options": {"co_scheduling": False}})
    runs = {}
    for staging in ("l2", "vtcm_dma"):
        out = tmp_path / f"{staging}.json"
        r = invoke("run", "--soc", "sd888", str(wl), "--set", f"dsp.activation_staging={staging}", "--quiet",
                   "--deterministic", "--json", str(out))
        assert r.exit_code == 0, r.output
        runs[staging] = json.loads(out.read_text())
    dsp_s = {k: v["placement"]["time_s"]["dsp"] for k, v in runs.items()}
    assert dsp_s["vtcm_dma"] < dsp_s["l2"]
    # the SoC's default is vtcm_dma on the V68: the same run without the override
    out = tmp_path / "default.json"
    assert invoke("run", "--soc", "sd888", str(wl), "--quiet", "--deterministic", "--json", str(out)).exit_code == 0
    assert json.loads(out.read_text())["per_batch"] == runs["vtcm_dma"]["per_batch"]
    # V66 has no user DMA: an input error naming the field
    r = invoke("run", "--soc", "sd865", str(wl), "--set", "dsp.activation_staging=vtcm_dma", "--quiet")
    assert r.exit_code == 2 and "dsp.activation_staging" in r.output and "V68" in r.output


def test_socsim_op_staging_option():
    args = ("op", "--soc", "sd888", "--unit", "dsp", "conv2d", "--batch", "32", "--in", "64x32x32", "--json", "-")
    l2 = json.loads(invoke(*args, "--staging", "l2").output)
    dma = json.loads(invoke(*args, "--staging", "vtcm_dma").output)
    default = json.loads(invoke(*args).output)
    assert default == dma and l2["cycles"] == dma["cycles"]
    assert dma["kernel_time_s"] < l2["kernel_time_s"] / 5     # Table 4's cliff, gone with DMA staging
    r = invoke("op", "--soc", "sd865", "--unit", "dsp", "conv2d", "--staging", "vtcm_dma")
    assert r.exit_code == 2 and "--staging" in r.output and "V68" in r.output
    r = invoke("op", "--soc", "sd888", "--unit", "cpu", "conv2d", "--staging", "l2")
    assert r.exit_code == 2 and "--staging" in r.output
