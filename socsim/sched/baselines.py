"""Baseline training frameworks: the same graph, run as each framework runs it.

mnn-fp32     MNN, FP32 on the CPU (4 big cores by default), graph built once.
mnn-int8     MNN with the INT8 training algorithm (NITI) on CPU NEON (sdot), same cores.
tflite-fp32  TFLite, FP32 on the CPU; re-prepares its interpreter graph every batch.
mnn-fp32-gpu MNN's OpenCL backend: FP32 on the GPU, the CPU drives it.
pytorch      PyTorch mobile: FP32 with as many threads as big cores.
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from socsim.sched.api import BaseScheduler, Plan
from socsim.sched.common import single_unit_plan


class CpuOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    cores: str | list[int] | None = Field(None, description="core set; default: the workload's cpu.cores, else 4 big cores")


class _CpuBaseline(BaseScheduler):
    Options = CpuOptions
    framework = ""
    default_cores = "big4"

    def plan(self, ctx) -> Plan:
        graph = ctx.graph(self.precision)
        cores = ctx.cores(self.options.cores, default=self.default_cores) if self.options.cores else ctx.cores(default=self.default_cores)
        return single_unit_plan(graph, "cpu", cores, f"{self.name} cpu{''.join(map(str, cores))}",
                                cpu_graph_prep_s=self.graph_prep_s(ctx, graph))

    def graph_prep_s(self, ctx, graph) -> float:
        return 0.0


class MnnFp32(_CpuBaseline):
    name = "mnn-fp32"
    precision = "fp32"
    description = "MNN FP32 training on the CPU (4 big cores)"


class MnnInt8(_CpuBaseline):
    name = "mnn-int8"
    precision = "niti"
    description = "MNN with INT8 (NITI) training on CPU NEON"


class Octo(_CpuBaseline):
    name = "octo"
    precision = "octo"
    description = "Octo: INT8 training with loss-aware compensation on CPU NEON (ATC '21)"
