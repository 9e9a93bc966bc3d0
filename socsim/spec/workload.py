"""Pydantic model of a training job (``workloads/*.yaml``); docs/architecture.md fixes the keys."""
from __future__ import annotations

import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import Field, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from socsim.spec.base import StrictModel

CORE_SETS = ("big1", "big2", "big3", "big4", "little1", "little2", "little3", "little4",
             "hybrid8", "prime1", "all")
GOVERNORS = ("performance", "powersave", "userspace", "schedutil")

#: largest input dimension, class count and mini-batch a workload may name
MAX_DIM, MAX_CLASSES, MAX_BATCH = 1 << 16, 1 << 24, 1 << 20
#: Most batches a run may have (``batches``, or ``epochs`` x batches per epoch): identical batches
#: replay in one event, but each still costs ~0.5 ms of the engine (measured: 200,000 quick-start
#: batches, ~100 s of CPU): 10^7 batches is ~1.5 h, a week of back-to-back training of the
#: quick-start; its batches.csv rows are bounded by output.batch_rows (docs/guide.md, Limits and errors)
MAX_BATCHES = 10**7
#: Most epochs and dataset samples a workload may name (the product is bounded by MAX_BATCHES)
MAX_EPOCHS, MAX_DATASET = 10**6, 10**12
MAX_TRACE_LIMIT = 10**7
#: Most timeseries.csv rows output.sample_rows may keep at full rate
MAX_SAMPLE_ROWS = 10**9


def _members(ann: Any) -> list[Any]:
    """The types ``ann`` admits, through ``Annotated`` and unions (not into lists or dicts)."""
    if get_origin(ann) is Annotated:
        return _members(get_args(ann)[0])
    if get_origin(ann) in (Union, types.UnionType):
        return [m for a in get_args(ann) for m in _members(a)]
    return [ann]


def _bool_for_number(ann: Any, v: Any) -> bool:
    """Whether ``v`` holds a bool where ``ann`` takes a number and no bool (in a list's items
    and a mapping's values too)."""
    members = _members(ann)
    if isinstance(v, bool):
        return bool({int, float} & set(members)) and bool not in members
    if isinstance(v, list):
        items = [get_args(m)[0] for m in members if get_origin(m) is list and get_args(m)]
        return any(_bool_for_number(a, x) for a in items for x in v)
    if isinstance(v, dict):
        values = [get_args(m)[1] for m in members if get_origin(m) is dict and len(get_args(m)) == 2]
        return any(_bool_for_number(a, x) for a in values for x in v.values())
    return False


class WorkloadBlock(StrictModel):
    """A block of a workload.  pydantic reads true/false as 1/0 where a field takes an int or
    a float, so ``--set batches=true`` would run 1 batch: a boolean given for a number (and no
    boolean) is an error instead, for every field of every block."""

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_numbers(cls, v: Any, info: ValidationInfo) -> Any:
        ann = cls.model_fields[info.field_name].annotation
        if _bool_for_number(ann, v):
            raise ValueError("expected a number, got true/false")
        if isinstance(v, str):   # pydantic would read "32" as 32: the guide's "numbers only"
            members = _members(ann)
            if {int, float} & set(members) and str not in members and not any(get_origin(m) is Literal
                                                                               for m in members):
                raise ValueError("expected a number, got a string (quoted in the YAML?)")
        return v


class SchedulerRef(WorkloadBlock):
    name: str = "mnn-fp32"
    options: dict[str, Any] = Field(default_factory=dict)


class CpuSettings(WorkloadBlock):
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
        if isinstance(v, str) and v.isascii() and v.isdigit():
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


class DspSettings(WorkloadBlock):
    freq_mhz: float | None = Field(None, gt=0, description="default: the SoC's training clock; on a SoC, within "
                                   "the DSP's OPP range (between OPPs: the OPP below)")
    batch_padding: bool = True
    activation_staging: Literal["l2", "vtcm_dma"] | None = Field(
        None, description="how HVX kernels reach activations (default: the SoC's dsp.activation_staging): l2 "
        "streams them through the L2 (Hexagon NN on V66), vtcm_dma DMAs tiles into VTCM overlapping compute (V68+)")


class BudgetStep(WorkloadBlock):
    at_s: float = Field(ge=0)
    mb: float = Field(gt=0)


class ForegroundLoad(WorkloadBlock):
    """A foreground app occupying some cores for a while (Swan's interference)."""

    cores: list[int] = Field(min_length=1)
    start_s: float = Field(0.0, ge=0)
    duration_s: float = Field(gt=0)
    # 0.8: assumption (Swan reports interference, not the foreground app's load): an
    # interactive app keeps its cores ~80% busy; set it per workload.
    utilization: float = Field(0.8, gt=0, le=1)
    memory_gbs: float = Field(0.0, ge=0, le=1000, description="DRAM bandwidth the app uses while it runs (GB/s): "
                              "training's memory traffic gets what is left (socsim.hw.dram)")
    name: str = "foreground-app"


class Background(WorkloadBlock):
    """The phone's own background work while it ran the job (system services, kernel threads):
    per core domain, core-seconds per second at the domain's top clock.  It preempts the
    framework's threads wherever they fill a domain, and in lockstep holds all of them up
    (socsim.hw.forkjoin).  A domain left out (null) takes the value fitted on the development set
    (forkjoin.BACKGROUND_UTIL_TOP: little 0.20, big 0.13); ``{little: 0, big: 0}``: a quiet phone,
    ideal lockstep."""

    little: float | None = Field(None, ge=0, le=1, allow_inf_nan=False,
                                 description="background work on the first (little) cluster, as a fraction of one "
                                 "core at its top OPP (0-1); null: the fitted value (forkjoin.BACKGROUND_UTIL_TOP)")
    big: float | None = Field(None, ge=0, le=1, allow_inf_nan=False,
                              description="background work on the other clusters together, as a fraction of one "
                              "core at their top OPP (0-1); null: the fitted value (forkjoin.BACKGROUND_UTIL_TOP)")


class Environment(WorkloadBlock):
    ambient_c: float = Field(25.0, ge=-20, le=60)
    memory_budget_mb: float | list[BudgetStep] | None = None
    foreground_load: ForegroundLoad | list[ForegroundLoad] | None = None
    charging: bool = True
    charger_w: float = Field(7.5, ge=0, description="power the charger draws at the wall while charging "
                             "(5 V x 1.5 A USB); it delivers the SoC spec's battery.charger_efficiency of it")
    initial_soc: float | None = Field(None, ge=0, le=1)
    initial_temp_c: float | None = Field(None, ge=-20, le=120, description="temperature of every thermal node "
                                         "at t = 0 (a phone still warm from earlier work); null: ambient_c")
    background: Background | None = Field(None, description="the phone's own background work during the run "
                                          "(socsim.hw.forkjoin); null: the fitted values")

    @field_validator("memory_budget_mb")
    @classmethod
    def _budget(cls, v):
        if isinstance(v, (int, float)) and v <= 0:
            raise ValueError(f"memory budget must be positive, got {v}")
        if isinstance(v, list):
            if not v:
                raise ValueError("a budget profile needs at least one step {at_s, mb} (null: no budget)")
            for i in range(1, len(v)):
                # (two steps at one time are a budget dropping twice at once: each is delivered)
                if v[i].at_s < v[i - 1].at_s:
                    raise ValueError(f"the profile's steps must come in order of time: step {i} (at_s "
                                     f"{v[i].at_s:g}) comes before step {i - 1} (at_s {v[i - 1].at_s:g})")
        return v

    @property
    def foreground_loads(self) -> list[ForegroundLoad]:
        if self.foreground_load is None:
            return []
        return self.foreground_load if isinstance(self.foreground_load, list) else [self.foreground_load]


class Output(WorkloadBlock):
    sample_ms: float = Field(100.0, ge=0.1, allow_inf_nan=False,
                             description="sampling period of the time series (ms); at least 0.1 ms (10,000 "
                             "samples per simulated second, twice a Monsoon power monitor's 5 kHz): every "
                             "batch is cut at each sampling boundary (socsim.engine.accounting), so a "
                             "shorter period only costs memory and run time")
    trace_batches: int = Field(200, ge=0, description="op slices kept for the first N batches")
    trace_every: int = Field(50, ge=1, description="...then for every N-th batch")
    # 200: the op detail of a long run stays bounded (a 2,000,000-batch run keeps ~1,200
    # batches' slices instead of 40,000: ~12 MB of ops.csv, not a GB; 1000 kept ~3,900, 40 MB);
    # every workload in workloads/ (2,000 batches at most) is shorter than trace_every x
    # trace_limit = 10,000 batches, so its output does not change
    trace_limit: int | None = Field(200, ge=1, le=MAX_TRACE_LIMIT,
                                    description="after trace_every x trace_limit batches the interval doubles, "
                                    "and again each time the run doubles in length (about trace_limit / 2 traced "
                                    "batches per doubling); null: every trace_every-th batch to the end")
    # 20,000: every workload in workloads/ (2,000 batches at most) keeps its row per batch and
    # its batches.csv byte for byte; a 2,000,000-batch run writes ~53,000 rows (~5 MB), not 2M
    # (100,000 wrote ~208,000 rows: 18 MB, and 27 MB of batch slices in the trace)
    batch_rows: int | None = Field(20_000, ge=1, le=MAX_BATCHES,
                                   description="batches.csv has a row per batch for the first N batches; "
                                   "past N a row sums a group of batches (a 'batches' column says how many), "
                                   "the group growing 2x each time the run doubles in length (about N / 4 "
                                   "rows per doubling); null: a row per batch to the end")
    # 100,000 (~2.8 simulated hours at 100 ms): the longest time series of a workload in
    # workloads/ is a Swan run's, 17,551 to 88,430 rows as main's thermal and power models moved on
    # 2026-11-27 (swan_shufflenet.yaml 25,749 and swan_mobilenetv2.yaml 22,737 at the last count),
    # so every one keeps its timeseries.csv and trace byte for byte with room to spare.  The
    # 2,000,000-batch quick-start (53,000-95,000 rows) is below it too; a 10^7-batch one is grouped
    sample_rows: int | None = Field(100_000, ge=2, le=MAX_SAMPLE_ROWS,
                                    description="timeseries.csv (and the trace's counters) has every sample for the "
                                    "first N rows; past N a row stands for a group of consecutive samples (states at "
                                    "the group's start, interval means over the group), the group growing 2x each "
                                    "time the series doubles in length (about N / 4 rows per doubling); null: every "
                                    "sample to the end")




class OnnxModel(WorkloadBlock):
    """``model: {onnx: path.onnx, input: [c, h, w]}``: an ONNX file with the per-sample input
    shape it is imported at (the workload's ``input``, which may then be left out)."""

    onnx: str = Field(min_length=1)
    input: list[Annotated[int, Field(gt=0, le=MAX_DIM)]] | None = Field(None, min_length=1, max_length=3)

    @field_validator("onnx")
    @classmethod
    def _is_onnx(cls, v: str) -> str:
        if not v.lower().endswith(".onnx"):
            raise ValueError("expected the path of an .onnx file")
        return v


class Workload(WorkloadBlock):
    name: str
    model: str
    # upper bounds: far beyond any phone's memory, but small enough that every tensor size of
    # the training graph stays a 64-bit byte count (a larger value is an error, not an overflow)
    input: list[Annotated[int, Field(gt=0, le=MAX_DIM)]] = Field(min_length=1, max_length=3)
    num_classes: int = Field(10, gt=0, le=MAX_CLASSES)
    batch_size: int = Field(gt=0, le=MAX_BATCH)
    batches: int | None = Field(None, gt=0, le=MAX_BATCHES)
    epochs: int | None = Field(None, gt=0, le=MAX_EPOCHS)
    dataset_size: int | None = Field(None, gt=0, le=MAX_DATASET)
    precision: Literal["fp32", "niti", "octo"] = "fp32"
    mode: Literal["train", "inference"] = Field("train", description="train: forward, backward and update "
                                                "of every batch; inference: the forward pass alone (no loss "
                                                "gradient, no weight update), as a deployed model runs")
    scheduler: SchedulerRef = Field(default_factory=SchedulerRef)
    cpu: CpuSettings = Field(default_factory=CpuSettings)
    dsp: DspSettings = Field(default_factory=DspSettings)
    environment: Environment = Field(default_factory=Environment)
    output: Output = Field(default_factory=Output)
    seed: int = Field(0, ge=0, lt=2**63, description="seeds the run's random generator")
    description: str = ""

    @model_validator(mode="before")
    @classmethod
    def _onnx_form(cls, data: Any) -> Any:
        """``model: {onnx: path, input: [...]}`` -> ``model: path`` and ``input``; an error names
        ``model.onnx`` or ``model.input`` (or ``input`` when both shapes are given and differ)."""
        if not isinstance(data, dict) or not isinstance(data.get("model"), dict):
            return data
        from pydantic import ValidationError

        try:
            ref = OnnxModel.model_validate(data["model"])
        except ValidationError as e:
            err = e.errors()[0]
            loc = ("model", *err["loc"])
            if err["type"] == "missing":
                raise PydanticCustomError("onnx_model", "expected {{onnx: path.onnx, input: [c, h, w]}}: "
                                          "the key 'onnx' is missing", {"fields": (("model",),)}) from None
            msg = "unknown key (expected onnx and input)" if err["type"] == "extra_forbidden" else \
                err["msg"].removeprefix("Value error, ")
            raise PydanticCustomError("onnx_model", msg.replace("{", "{{").replace("}", "}}"),
                                      {"fields": (loc,)}) from None
        out = {**data, "model": ref.onnx}
        if ref.input is not None:
            if "input" in data and data["input"] != ref.input:
                raise PydanticCustomError("onnx_model", "the input shape is given twice and differs "
                                          "(model.input {a}, input {b}); give it once",
                                          {"fields": (("model", "input"),), "a": str(ref.input),
                                           "b": str(data["input"])})
            out["input"] = list(ref.input)
        return out

    @model_validator(mode="after")
    def _length(self) -> "Workload":
        # the error's ctx names the fields it is about: socsim.spec.loader reports the one a
        # --set gave (``--set batches=`` empties batches) rather than the whole workload
        fields = {"fields": ("batches", "epochs", "dataset_size")}
        if self.batches is None:
            if self.epochs is None or self.dataset_size is None:
                raise PydanticCustomError("run_length", "give either 'batches' or both 'epochs' and 'dataset_size'",
                                          fields)
        elif self.epochs is not None:
            raise PydanticCustomError("run_length", "give 'batches' or 'epochs', not both", fields)
        if self.total_batches > MAX_BATCHES:
            raise PydanticCustomError("run_length", "epochs x ceil(dataset_size / batch_size) = {n} batches, more "
                                      "than the cap of {cap} a run may have (docs/guide.md, Limits and errors)",
                                      {"fields": ("epochs", "dataset_size", "batch_size"), "n": f"{self.total_batches:,}",
                                       "cap": f"{MAX_BATCHES:,}"})
        return self

    @property
    def total_batches(self) -> int:
        if self.batches is not None:
            return self.batches
        per_epoch = -(-self.dataset_size // self.batch_size)  # type: ignore[operator]
        return per_epoch * self.epochs  # type: ignore[operator]
