"""BACKWARD_KERNEL_SLOWDOWN re-derived from its source (pub:training_vs_inference) with the
interval-model stalls exposed (sd855 has the uncore block) and the inference step's Winograd
convolutions costed from their instruction streams (socsim.hw.cpu.winograd_cycles): see the
note in socsim/hw/cpu.py."""
import pytest

import socsim.hw.cpu as cpu
from socsim.engine.context import build_graph
from socsim.engine.cores import resolve_cores
from socsim.hw.cost import CpuConfig
from socsim.spec import load_soc
from socsim.workload.ops import as_inference

STEP_RATIO = 7.14  # pub:training_vs_inference.time_ratio_same_batch


def derive(soc_name: str, winograd_speedup: float | None = None) -> float:
    """The slowdown s that makes the model's training step / inference step 7.14.  The inference
    step runs 3x3 stride-1 convolutions as Winograd: costed from the kernels' instruction streams
    (``winograd_speedup`` None) or as im2col + GEMM divided by a given speed-up."""
    soc = load_soc(soc_name)
    g = build_graph("vgg16", (3, 32, 32), 10, 64, "fp32")
    cfg = CpuConfig(resolve_cores(soc, "big4"), tuple(sorted((cl.name, cl.max_mhz) for cl in soc.cpu.clusters)))
    saved = cpu.BACKWARD_KERNEL_SLOWDOWN
    cpu.BACKWARD_KERNEL_SLOWDOWN = 1.0
    try:
        t_inf = rest = bwd = 0.0
        for op in g.ops:
            c = cpu.cpu_cost(soc, op, cfg)
            comp = c.cycles / (c.freq_mhz * 1e6)
            # background preemption (socsim.hw.forkjoin) stretches training and inference
            # alike: a common factor of the ratio, left out
            stall = c.stall_s - dict(c.detail)["noise_s"]
            if op.phase == "forward":
                # the inference step's op: its weights constants (no per-step packing)
                ci = cpu.cpu_cost(soc, as_inference(op), cfg)
                comp_i = ci.cycles / (ci.freq_mhz * 1e6)
                stall_i = ci.stall_s - dict(ci.detail)["noise_s"]
                p = op.p
                wino = op.kind == "conv2d" and p.get("kh") == 3 and p.get("kw") == 3 and p.get("stride", 1) == 1
                inf = comp_i
                if wino and winograd_speedup is None:
                    cl = soc.cpu.cluster_of(max(cfg.cores))
                    inf = comp_i * cpu.winograd_cycles(op, cl) / cpu.compute_cycles(as_inference(op), cl)
                elif wino:
                    inf = comp_i / winograd_speedup
                t_inf += inf + stall_i
            if op.kind in cpu.GEMM_KINDS and op.phase in cpu.BACKWARD_PHASES:
                bwd += comp
                rest += stall
            else:
                rest += comp + stall
    finally:
        cpu.BACKWARD_KERNEL_SLOWDOWN = saved
    return (STEP_RATIO * t_inf - rest) / bwd


# The derivation gives s ~2.63 since the weight gradient's stream follows MNN's chunk-blocked
# MatMul (socsim/hw/cache/streams.py): the per-tile dW read-modify-write it had before put
# memory stalls into the four-thread training step that stood in for part of the 7.14 ratio.
# With the parts of MNN's weight gradient that the stream leaves out now costed in socsim.hw.cpu
# (the one-thread packing of dY's panel, the materialised im2col buffer's copy and DRAM spill,
# the round-robin dW tiles, dY's transpose) it gives ~2.49, and ~2.33 with the passes MNN 1.2-2.7's
# CPUMatMul runs on one thread (socsim.hw.cpu.MNN_MATMUL_ONE_THREAD: packing A and B, unpacking C,
# for the gradients' MatMuls; training-step time that the inference step does not have), at the
# A76's 0.82; the efficiencies re-fitted with those passes (A76 0.810, socsim/spec/coretypes.py)
# give ~2.32 (the stalls, which the efficiency leaves alone, weigh less against the compute).  At
# 2.33 benchmarks/fit_core_efficiency.py pins the A76's efficiency at its grid's top (0.995 of the
# tile's llvm-mca peak) with the development set's BIG1 rows still 5.8% off (at 2.32: 0.995, 6.9% off).  The constant stays at 1.62 (fitted jointly with the
# core efficiencies; 2.3 is outside what the backward kernels' instruction streams allow, and it
# would slow the development set's single-core rows by ~40% at the fitted efficiencies) until what else the
# four-thread training step spends is found (docs/validation.md, "The weight gradient's memory
# stream").  A training step's forward convolutions (MNN's ConvolutionTiledExecutorMultiInput: the
# weights transposed and packed on one thread each step) and fully connected layers (CPUMatMul,
# its one-thread passes) against the inference step's constant weights (socsim.hw.cpu.
# multi_input_weights; the inference step is costed from forward_only's ops): ~2.31.
@pytest.mark.xfail(strict=True, reason="derivation gives ~2.31, not 1.62; see the note above")
def test_backward_slowdown_rederived_with_stalls_exposed():
    s = derive("sd855")
    assert s == pytest.approx(cpu.BACKWARD_KERNEL_SLOWDOWN, abs=0.02)
    # the streams' F(2x2,3x3) speed-up is ~2.24; MNN's larger units (up to ~3) would lower s,
    # a speed-up of 2 raise it: the slowdown stays between ~1.2 and ~1.8
    assert 1.1 < derive("sd855", 3.0) < s < derive("sd855", 2.0) < 1.9


def test_winograd_speedup_from_the_streams_is_about_f2x2_3x3s_multiply_cut():
    """F(2x2,3x3) does 2.25x fewer multiplies; its transforms cost a few percent on top, the
    im2col packing it avoids gives a few back."""
    soc = load_soc("sd855")
    g = build_graph("vgg16", (3, 32, 32), 10, 64, "fp32")
    for cl in soc.cpu.clusters:
        direct = wino = 0.0
        for op in g.ops:
            w = cpu.winograd_cycles(op, cl)
            if w is not None:
                direct += cpu.compute_cycles(op, cl)
                wino += w
        assert wino > 0
        assert 2.0 < direct / wino < 2.4, cl.name
