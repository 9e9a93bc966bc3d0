"""The measurement files ``socsim fidelity`` reads, as pydantic models (docs/fidelity.md).

Three formats: socsim's own (``format: socsim-fidelity/1``: tables of rows, each a socsim run
and the figures measured on the phone, and optional ratios between rows), and the two published
formats of the development set as they are: the Min-Energy table (core sets x frequency levels)
and the ncnn benchmark list (devices x runs).
"""
from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, PositiveFloat, PositiveInt, field_validator, model_validator

from socsim.spec.base import StrictModel
from socsim.spec.workload import Background

GENERAL_FORMAT = "socsim-fidelity/1"
#: a Min-Energy core-set name: BIG2, LITTLE4, HYBRID8, PRIME1
CORE_SET_NAME = re.compile(r"^(BIG|LITTLE|HYBRID|PRIME)([1-9][0-9]?)$")

Freq = Literal["max", "mid", "min"] | PositiveFloat


class Row(StrictModel):
    """One measured configuration: the socsim run that stands for it and what the phone gave."""

    id: str = Field(min_length=1, description="the row's name in the output")
    soc: str = Field(min_length=1, description="a socsim SoC name (socsim list socs) or a spec path")
    model: str = Field(min_length=1, description="a model of socsim's zoo (socsim list models)")
    input: list[Annotated[int, Field(gt=0)]] = Field(min_length=1, max_length=3)
    num_classes: PositiveInt = 1000
    batch: PositiveInt = 1
    mode: Literal["train", "inference"] = "train"
    scheduler: str = Field("mnn-fp32", description="the socsim scheduler that runs as the framework did")
    framework: str = Field("", description="what ran on the phone, as a label (MNN 2.x FP32, ...)")
    cores: str | list[Annotated[int, Field(ge=0)]] | None = Field(
        None, description="socsim core set (big2, little4, hybrid8, ...) or core ids; default: the scheduler's")
    threads: PositiveInt | None = Field(None, description="threads the framework ran; socsim runs one per core")
    freq: Freq | dict[str, Freq] = Field("max", description="max|mid|min or MHz, or per cluster")
    governor: Literal["performance", "powersave", "userspace", "schedutil"] | None = Field(
        None, description="default: userspace when freq is given, else schedutil")
    time_s: PositiveFloat = Field(description="measured time of one batch (s)")
    energy_j: PositiveFloat | None = Field(None, description="measured energy of one batch attributed to the job (J)")
    device: str = Field("", description="the phone, as a label")
    background: Background | None = Field(
        None, description="the phone's own background work while it measured, {little, big} (a workload's "
        "environment.background); default: the fitted values")

    @model_validator(mode="after")
    def _threads(self) -> "Row":
        if self.threads is not None and isinstance(self.cores, list) and self.threads != len(self.cores):
            raise ValueError(f"threads {self.threads} but {len(self.cores)} cores listed: socsim runs one "
                             "thread per core")
        return self


class Ratio(StrictModel):
    """A figure the phone gives only relative to another: time of row ``num`` over row ``den``."""

    name: str = Field(min_length=1)
    kind: str = Field("ratio", min_length=1, description="groups ratios in the output (threads 1->4, ...)")
    num: str = Field(min_length=1, description="id of the row whose time is the numerator")
    den: str = Field(min_length=1, description="id of the row whose time is the denominator")


class Table(StrictModel):
    """A table of rows: absolute figures compared row by row, or (``compare: ratios``) only the
    ratios between its rows."""

    name: str = Field(min_length=1)
    compare: Literal["absolute", "ratios"] = "absolute"
    defaults: dict[str, Any] = Field(default_factory=dict, description="fields every row gets unless it gives them")
    rows: list[dict[str, Any]] = Field(min_length=1)
    ratios: list[Ratio] = Field(default_factory=list)


class GeneralFile(StrictModel):
    format: Literal["socsim-fidelity/1"]
    source: str = Field(min_length=1, description="where the figures were measured or published")
    notes: list[str] = Field(default_factory=list)
    tables: list[Table] = Field(min_length=1)


class MinEnergyRow(StrictModel):
    time_s: list[PositiveFloat] = Field(min_length=1)
    energy_j: list[PositiveFloat] = Field(min_length=1)


class MinEnergyFile(StrictModel):
    """Min-Energy's Table II: per core set, time and energy per batch at each frequency level."""

    source: str = Field(min_length=1)
    soc: str = Field(min_length=1)
    model: str = Field(min_length=1)
    batch: PositiveInt
    input: list[Annotated[int, Field(gt=0)]] = Field(min_length=1, max_length=3)
    # the table gives no class count: the ImageNet subset's is assumed 10, as the built-in
    # workloads/min_energy_alexnet.yaml does
    num_classes: PositiveInt = 10
    framework: str = Field(min_length=1)
    levels: list[str] = Field(min_length=1)
    big_ghz: list[PositiveFloat] = Field(min_length=1)
    little_ghz: list[PositiveFloat] = Field(min_length=1)
    rows: dict[str, MinEnergyRow] = Field(min_length=1)
    claims: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)

    @field_validator("rows")
    @classmethod
    def _names(cls, v: dict[str, MinEnergyRow]) -> dict[str, MinEnergyRow]:
        for name in v:
            if not CORE_SET_NAME.match(str(name)):
                raise ValueError(f"unknown core set {name!r}; expected BIG<n>, LITTLE<n>, HYBRID<n> or PRIME1")
        return v

    @model_validator(mode="after")
    def _lengths(self) -> "MinEnergyFile":
        n = len(self.levels)
        for key in ("big_ghz", "little_ghz"):
            if len(getattr(self, key)) != n:
                raise ValueError(f"{key} has {len(getattr(self, key))} values for {n} levels")
        for name, row in self.rows.items():
            for key in ("time_s", "energy_j"):
                if len(getattr(row, key)) != n:
                    raise ValueError(f"row {name}: {key} has {len(getattr(row, key))} values for {n} levels")
        return self


class NcnnRun(StrictModel):
    """One benchncnn invocation: threads, core choice, CPU or GPU, average ms per model."""

    threads: PositiveInt
    powersave: Literal[0, 1, 2] = Field(description="0 any cores, 1 little cores only, 2 big cores only")
    gpu_device: int = Field(ge=-1, description="-1 the CPU, else the Vulkan GPU's index")
    avg_ms: dict[str, PositiveFloat] = Field(min_length=1)


class NcnnDevice(StrictModel):
    device: str = Field(min_length=1)
    runs: list[NcnnRun] = Field(min_length=1)
    background: Background | None = Field(
        None, description="the phone's own background work while it ran benchncnn, {little, big} (a workload's "
        "environment.background); default: a quiet phone, socsim.fidelity.ncnn.BENCHNCNN_BACKGROUND")


class NcnnFile(StrictModel):
    devices: list[NcnnDevice] = Field(min_length=1)
