"""Analytic GPU cost model (OpenCL training kernels on Adreno / Mali).

time = FLOPs / (peak FLOPs per cycle x efficiency x f) + DRAM bytes / achievable bandwidth
       + kernel launch overhead.
The GPU streams its operands from DRAM (its caches are small next to training tensors), so the
memory term is the op's full traffic.  Small micro-batches under-utilise the GPU: utilisation
falls as the work per kernel shrinks below what fills the shader cores (Sage's MTP).
"""
from __future__ import annotations

from socsim.hw.cost import GpuConfig, OpCost, UnsupportedOp
from socsim.spec.soc import SocSpec
from socsim.workload.ops import Op

# Work (MACs) per kernel below which the shader cores are not all busy: utilisation scales as
# work / FILL_MACS.  Chosen so ResNet-50 convolutions at micro-batch ~6 fill an Adreno 650
# (pub:gpu_micro_batch_tipping_point.resnet50_mobile_gpu_mtp = 6; its median conv is ~115 M
# MACs per sample at 224x224 -> ~0.7 G MACs).
FILL_MACS = 0.35e9


class GpuCostModel:
    def __init__(self, soc: SocSpec) -> None:
        if soc.gpu is None:
            raise ValueError(f"{soc.name} has no GPU")
        self.soc = soc
        self.gpu = soc.gpu
        self._memo: dict[tuple, OpCost] = {}

    def supports(self, op: Op) -> bool:
        return op.dtype in ("fp32", "fp16")

    def cost(self, op: Op, cfg: GpuConfig) -> OpCost:
        key = (op.signature, op.macs, op.flops, op.bytes_read, op.bytes_written, cfg.freq_mhz)
        c = self._memo.get(key)
        if c is None:
            c = self._memo[key] = gpu_cost(self.soc, op, cfg.freq_mhz)
        return c


def gpu_cost(soc: SocSpec, op: Op, freq_mhz: float) -> OpCost:
    gpu = soc.gpu
    if op.dtype not in ("fp32", "fp16"):
        raise UnsupportedOp(f"{gpu.name} model runs fp32/fp16 kernels, not {op.dtype} ({op.kind})")
    flops = 2 * op.macs + op.flops
    util = 1.0
    if op.macs:
        util = min(1.0, max(0.05, op.macs / FILL_MACS))
    rate = gpu.fp32_flops_per_cycle * gpu.fp32_efficiency * util
    cycles = int(flops / rate) if flops else 0
    traffic = op.bytes_read + op.bytes_written
    bw = soc.dram.bandwidth_gbs * soc.dram.achievable_fraction * 1e9
    stall_s = traffic / bw + gpu.kernel_launch_us * 1e-6
    return OpCost.compose(cycles, freq_mhz, stall_s, bytes=traffic, dram_bytes=traffic,
                          activity=min(1.0, 0.3 + 0.7 * util), busy=(("gpu", 1),),
                          detail=(("utilisation", util),))
