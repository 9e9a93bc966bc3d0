"""Pydantic model of a training job (``workloads/*.yaml``); DESIGN.md fixes the keys."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, PositiveInt, field_validator, model_validator

from socsim.spec.base import StrictModel

CORE_SETS = ("big1", "big2", "big3", "big4", "little1", "little2", "little3", "little4",
             "hybrid8", "prime1", "all")
GOVERNORS = ("performance", "powersave", "userspace", "schedutil")


class SchedulerRef(StrictModel):
    name: str = "mnn-fp32"
    options: dict[str, Any] = Field(default_factory=dict)


class CpuSettings(StrictModel):
    """Which cores the job may use and how their frequency is governed.

    ``cores``: a named set (big1|big2|big4|little1|little2|little4|hybrid8|...), core ids, or
    core ids as a string of digits as Swan writes them ('456').
    ``freq``: for the userspace governor, max|mid|min or MHz, either one value for all clusters
    or a mapping cluster -> value.
    """

    cores: str | list[int] | None = None
    governor: Literal["performance", "powersave", "userspace", "schedutil"] = "schedutil"
    freq: str | float | dict[str, str | float] = "max"

    @field_validator("cores", mode="before")
    @classmethod
    def _cores_number(cls, v):
        # YAML reads `cores: 456` as a number (and `cores: 012` as octal 10): ask for quotes
        if isinstance(v, int) and not isinstance(v, bool):
            raise ValueError("core ids as digits must be quoted, e.g. '456' (YAML reads a bare 456 as a number and "
                             "012 as octal 10), or give a list of core ids")
        return v

    @field_validator("cores")
    @classmethod
    def _cores(cls, v):
        if isinstance(v, str) and v.isdigit():
            if len(set(v)) != len(v):
                raise ValueError(f"core ids must be distinct, got {v!r}")
        elif isinstance(v, str) and v not in CORE_SETS:
            raise ValueError(f"unknown core set {v!r}; expected one of {', '.join(CORE_SETS)}, "
                             "a list of core ids or core ids as digits ('456')")
        if isinstance(v, list):
            if not v:
                raise ValueError("core list is empty")
            if any(c < 0 for c in v) or len(set(v)) != len(v):
                raise ValueError(f"core ids must be distinct and non-negative, got {v}")
        return v

    @field_validator("freq")
    @classmethod
    def _freq(cls, v):
        vals = v.values() if isinstance(v, dict) else [v]
        for x in vals:
            if isinstance(x, str) and x not in ("max", "mid", "min"):
                raise ValueError(f"frequency must be max|mid|min or MHz, got {x!r}")
            if isinstance(x, (int, float)) and not isinstance(x, bool) and x <= 0:
                raise ValueError(f"frequency must be positive, got {x}")
        return v


class DspSettings(StrictModel):
    freq_mhz: float | None = Field(None, gt=0, description="default: the SoC's training clock; on a SoC, within "
                                   "the DSP's OPP range (between OPPs: the OPP below)")
    batch_padding: bool = True


class BudgetStep(StrictModel):
    at_s: float = Field(ge=0)
    mb: float = Field(gt=0)


class ForegroundLoad(StrictModel):
    """A foreground app occupying some cores for a while (Swan's interference)."""

    cores: list[int] = Field(min_length=1)
    start_s: float = Field(0.0, ge=0)
    duration_s: float = Field(gt=0)
    utilization: float = Field(0.8, gt=0, le=1)
    memory_gbs: float = Field(0.0, ge=0, le=1000, description="DRAM bandwidth the app uses while it runs (GB/s): "
                              "training's memory traffic gets what is left (socsim.hw.dram)")
    name: str = "foreground-app"


class Environment(StrictModel):
    ambient_c: float = Field(25.0, ge=-20, le=60)
    memory_budget_mb: float | list[BudgetStep] | None = None
    foreground_load: ForegroundLoad | list[ForegroundLoad] | None = None
    charging: bool = True
    charger_w: float = Field(7.5, ge=0, description="charger power while charging (5 V x 1.5 A USB)")
    initial_soc: float | None = Field(None, ge=0, le=1)

    @field_validator("memory_budget_mb")
    @classmethod
    def _budget(cls, v):
        if isinstance(v, (int, float)) and v <= 0:
            raise ValueError(f"memory budget must be positive, got {v}")
        return v

    @property
    def foreground_loads(self) -> list[ForegroundLoad]:
        if self.foreground_load is None:
            return []
        return self.foreground_load if isinstance(self.foreground_load, list) else [self.foreground_load]


class Output(StrictModel):
    sample_ms: float = Field(100.0, gt=0, description="sampling period of the time series")
    trace_batches: int = Field(200, ge=0, description="op slices kept for the first N batches")
    trace_every: int = Field(50, ge=1, description="...then for every N-th batch")


class Workload(StrictModel):
    name: str
    model: str
    input: list[PositiveInt] = Field(min_length=1, max_length=3)
    num_classes: PositiveInt = 10
    batch_size: PositiveInt
    batches: PositiveInt | None = None
    epochs: PositiveInt | None = None
    dataset_size: PositiveInt | None = None
    precision: Literal["fp32", "niti", "octo"] = "fp32"
    scheduler: SchedulerRef = Field(default_factory=SchedulerRef)
    cpu: CpuSettings = Field(default_factory=CpuSettings)
    dsp: DspSettings = Field(default_factory=DspSettings)
    environment: Environment = Field(default_factory=Environment)
    output: Output = Field(default_factory=Output)
    seed: int = Field(0, ge=0, lt=2**63, description="seeds the run's random generator")
    description: str = ""

    @model_validator(mode="after")
    def _length(self) -> "Workload":
        if self.batches is None:
            if self.epochs is None or self.dataset_size is None:
                raise ValueError("give either 'batches' or both 'epochs' and 'dataset_size'")
        elif self.epochs is not None:
            raise ValueError("give 'batches' or 'epochs', not both")
        return self

    @property
    def total_batches(self) -> int:
        if self.batches is not None:
            return self.batches
        per_epoch = -(-self.dataset_size // self.batch_size)  # type: ignore[operator]
        return per_epoch * self.epochs  # type: ignore[operator]
