"""One door to the units' cost models, memoised per (op signature, unit, operating point).

Schedulers profile ops through it (as the real systems profile on the phone) and the engine
times ops with it, so both see the same numbers.
"""
from __future__ import annotations

import math

from socsim.hw.cost import CpuConfig, DspConfig, GpuConfig, OpCost, UnsupportedOp
from socsim.spec.soc import SocSpec
from socsim.workload.ops import Op


class CostOracle:
    def __init__(self, soc: SocSpec, dsp_batch_padding: bool = True) -> None:
        self.soc = soc
        self.dsp_batch_padding = dsp_batch_padding
        self._models: dict[str, object] = {}
        self._memo: dict[tuple, OpCost | None] = {}

    def model(self, unit: str):
        m = self._models.get(unit)
        if m is None:
            if unit == "cpu":
                from socsim.hw.cpu import CpuCostModel
                m = CpuCostModel(self.soc)
            elif unit == "dsp":
                if self.soc.dsp is None:
                    raise UnsupportedOp(f"{self.soc.name} has no DSP")
                from socsim.hw.dsp import DspCostModel
                m = DspCostModel(self.soc)
            elif unit == "gpu":
                if self.soc.gpu is None:
                    raise UnsupportedOp(f"{self.soc.name} has no GPU")
                from socsim.hw.gpu import GpuCostModel
                m = GpuCostModel(self.soc)
            else:
                raise ValueError(f"unknown unit {unit!r}")
            self._models[unit] = m
        return m

    def config(self, unit: str, cores: tuple[int, ...] = (), freqs: tuple[tuple[str, float], ...] = (),
               dsp_mhz: float | None = None, gpu_mhz: float | None = None):
        if unit == "cpu":
            return CpuConfig(cores=cores, freqs_mhz=freqs)
        if unit == "dsp":
            return DspConfig(freq_mhz=dsp_mhz or self.soc.dsp.training_clock_mhz,
                             batch_padding=self.dsp_batch_padding)
        return GpuConfig(freq_mhz=gpu_mhz or self.soc.gpu.opps[-1].freq_mhz)

    def cost(self, op: Op, unit: str, cfg) -> OpCost | None:
        """The op's cost on ``unit`` at ``cfg``, or None if the unit cannot run it."""
        key = (op.signature, op.macs, op.flops, op.bytes_read, op.bytes_written, unit, cfg)
        if key in self._memo:
            return self._memo[key]
        try:
            model = self.model(unit)
            c = model.cost(op, cfg) if model.supports(op) else None
        except UnsupportedOp:
            c = None
        self._memo[key] = c
        return c

    def time_s(self, op: Op, unit: str, cfg) -> float:
        c = self.cost(op, unit, cfg)
        return math.inf if c is None else c.time_s
