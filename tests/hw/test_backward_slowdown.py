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


# The derivation gave s ~2.63 once the weight gradient's stream followed MNN's chunk-blocked
# MatMul (socsim/hw/cache/streams.py), ~2.49 with the parts of MNN's weight gradient that the
# stream leaves out (the one-thread dY packing, the im2col buffer, the round-robin dW tiles, dY's
# transpose) and ~2.32 with MNN 1.2-2.7's one-thread CPUMatMul passes of the gradients, while the
# constant stayed at 1.62 (fitted jointly with the core efficiencies): the model's training step
# lacked work that MNN's Express training does every step and its inference step does not.  What
# closed the gap, each from MNN's source (socsim/hw/cpu.py):
# * the training step's forward convolutions and FC layers take their weights as inputs
#   (ConvolutionTiledExecutorMultiInput's one-thread transpose and packing; CPUMatMul's passes):
#   2.32 -> 2.31 (the inference step is costed from forward_only's ops);
# * MNN's SGD as its Express chain (six binary ops, five copies on one thread per tensor): 2.18;
#   the FP32 efficiencies re-fitted on it (A76 0.870): 2.26;
# * MNN's training batch normalisation as its Express ops and their gradients (9 passes over the
#   activations forward, 19 backward, against the fused op's 1 and 1; the inference step's
#   eval-mode BN is one _Scale): 1.73;
# * the fixed point with the efficiencies (benchmarks/fit_core_efficiency.py at each s): 1.73 ->
#   A76 0.910 -> 1.76 -> 0.925 -> 1.77 -> 0.930 -> 1.774.  The constant is 1.77.
def test_backward_slowdown_rederived_with_stalls_exposed():
    s = derive("sd855")
    assert s == pytest.approx(cpu.BACKWARD_KERNEL_SLOWDOWN, abs=0.02)
    # the streams' F(2x2,3x3) speed-up is ~2.24; MNN's larger units (up to ~3) would lower s
    # (~1.39), a speed-up of 2 raise it (~1.94): the slowdown stays between ~1.3 and ~2
    assert 1.2 < derive("sd855", 3.0) < s < derive("sd855", 2.0) < 2.1


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
