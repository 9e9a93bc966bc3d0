"""The fleet YAML: a population of simulated phones and a federated plan, validated with the
file, line, field and value of the first error (docs/fleets.md)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from socsim.errors import InputError
from socsim.spec.base import StrictModel
from socsim.spec.loader import load_yaml, validate
from socsim.spec.workload import SchedulerRef

#: a value drawn per client: one number, or [low, high] drawn uniformly
Spread = float | list[float]


def _spread(v: Any, what: str, lo: float | None = None, hi: float | None = None) -> Any:
    """``v`` if it is a number or an ordered [low, high] pair within [lo, hi]."""
    pair = v if isinstance(v, list) else [v, v]
    if len(pair) != 2:
        raise ValueError(f"{what}: expected a number or [low, high], got {len(pair)} values")
    if pair[0] > pair[1]:
        raise ValueError(f"{what}: low {pair[0]:g} is above high {pair[1]:g}")
    if (lo is not None and pair[0] < lo) or (hi is not None and pair[1] > hi):
        raise ValueError(f"{what}: must lie within {lo:g}..{hi:g}")
    return v


def bounds(v: Spread) -> tuple[float, float]:
    """A spread as (low, high)."""
    return (float(v[0]), float(v[1])) if isinstance(v, list) else (float(v), float(v))


class Phone(StrictModel):
    """One phone model of the population, its share of the clients and what it runs."""

    soc: str
    share: float = Field(gt=0)
    scheduler: SchedulerRef | None = None   # default: population.scheduler
    link: Literal["wifi", "lte"] | None = None   # default: population.link


class Availability(StrictModel):
    """When clients can train: a daily window per client, from a trace file or drawn."""

    trace: str | None = Field(None, description="CSV: client,start_h,end_h,charging (daily windows)")
    # defaults: always available, never charging (a population that is always reachable); the
    # documented generator draws a window per client (docs/fleets.md, Availability)
    window_start_h: Spread = 0.0
    window_hours: Spread = 24.0
    charging_share: float = Field(0.0, ge=0, le=1, description="share of clients on the charger in their window")

    @field_validator("window_start_h")
    @classmethod
    def _start(cls, v: Spread) -> Spread:
        return _spread(v, "window_start_h", 0.0, 24.0)

    @field_validator("window_hours")
    @classmethod
    def _hours(cls, v: Spread) -> Spread:
        return _spread(v, "window_hours", 0.0, 24.0)


class Population(StrictModel):
    clients: int = Field(gt=0, le=1_000_000)
    phones: list[Phone] = Field(min_length=1)
    scheduler: SchedulerRef = Field(default_factory=SchedulerRef)
    link: Literal["wifi", "lte"] = "wifi"
    samples: Spread = Field(600.0, description="local training samples per client ([low, high]: uniform)")
    # [0.5, 1.0]: assumption (no published distribution of phones' charge when an FL round
    # starts); set it per fleet
    initial_soc: Spread = [0.5, 1.0]
    availability: Availability = Field(default_factory=Availability)

    @field_validator("samples")
    @classmethod
    def _samples(cls, v: Spread) -> Spread:
        return _spread(v, "samples", 1.0, 1e9)

    @field_validator("initial_soc")
    @classmethod
    def _soc(cls, v: Spread) -> Spread:
        return _spread(v, "initial_soc", 0.0, 1.0)


class Quantise(StrictModel):
    """Starting states are rounded to these steps before a client's run, so clients in the same
    state share one simulation (docs/fleets.md, Caching)."""

    soc: float = Field(0.05, gt=0, le=1)
    temp_c: float = Field(0.5, gt=0, le=10)


class FedPlan(StrictModel):
    rounds: int = Field(gt=0, le=100_000)
    clients_per_round: int = Field(gt=0)
    selection: Literal["random", "round_robin"] = "random"
    local_epochs: int | None = Field(None, gt=0)
    local_steps: int | None = Field(None, gt=0)
    deadline_s: float = Field(gt=0)
    stragglers: Literal["drop", "wait"] = "drop"
    # 0.2: assumption (Android's battery saver starts at 15-20%; FL clients should not drain
    # a phone into it); 45 C: assumption (below the skin limits of the SoC specs' trip points)
    min_battery: float = Field(0.2, ge=0, le=1)
    max_temp_c: float = Field(45.0, ge=-20, le=120)
    start_h: float = Field(0.0, ge=0, lt=24, description="hour of day the first round starts")
    interval_s: float = Field(0.0, ge=0, description="idle time between the end of a round and the next")
    quantise: Quantise = Field(default_factory=Quantise)

    @model_validator(mode="after")
    def _local(self) -> "FedPlan":
        if (self.local_epochs is None) == (self.local_steps is None):
            raise ValueError("give either local_epochs or local_steps")
        return self


#: the workload fields the fleet sets per client (not given in the fleet's workload)
FLEET_SET = ("batches", "epochs", "dataset_size", "scheduler")


class FleetSpec(StrictModel):
    name: str
    description: str = ""
    seed: int = Field(0, ge=0, lt=2**63)
    workload: dict[str, Any]
    population: Population
    plan: FedPlan
    baselines: list[SchedulerRef] = Field(default_factory=list, description="schedulers every client job is "
                                          "also run with, for the energy comparison (no effect on state)")


def _check_names(spec: FleetSpec, file: str, lines) -> None:
    """SoC names, schedulers with their options, and the workload itself, as a run would."""
    from socsim.engine.context import build_graph
    from socsim.sched.registry import create
    from socsim.spec import load_soc, workload_from_dict_located

    for i, ph in enumerate(spec.population.phones):
        try:
            load_soc(ph.soc)
        except InputError as e:
            raise InputError(e.message, file=file, field=f"population.phones.{i}.soc", value=ph.soc,
                             line=lines.nearest(("population", "phones", i, "soc"))) from None
    refs = [(("population", "scheduler"), spec.population.scheduler)]
    refs += [(("population", "phones", i, "scheduler"), ph.scheduler)
             for i, ph in enumerate(spec.population.phones) if ph.scheduler is not None]
    refs += [(("baselines", i), b) for i, b in enumerate(spec.baselines)]
    for loc, ref in refs:
        try:
            create(ref.name, ref.options, file=file)
        except InputError as e:
            sub = (e.field or "").removeprefix("scheduler.")
            field = ".".join(str(x) for x in loc) + (f".{sub}" if sub else "")
            raise InputError(e.message, file=file, field=field, value=e.value, line=lines.nearest(loc)) from None
    given = sorted(k for k in FLEET_SET if k in spec.workload)
    if given:
        raise InputError("set by the fleet per client (plan.local_epochs/local_steps, population.samples, "
                         "the phone's scheduler); leave it out", file=file, field=f"workload.{given[0]}",
                         value=spec.workload[given[0]], line=lines.nearest(("workload", given[0])))
    try:
        wl, _ = workload_from_dict_located({"name": spec.name, **spec.workload, "batches": 1}, file)
        build_graph(wl.model, tuple(wl.input), wl.num_classes, wl.batch_size, wl.precision, file)
    except InputError as e:
        loc = ("workload",) + tuple(x for x in (e.field or "").split(".") if x)
        raise InputError(e.message, file=file, field=".".join(loc), value=e.value,
                         line=lines.nearest(loc)) from None


def load_fleet(path: str | Path, soc_mix: dict[str, float] | None = None) -> FleetSpec:
    """The validated fleet at ``path``; ``soc_mix`` (``--soc-mix``) replaces the phones, each
    running ``population.scheduler``.  Raises InputError naming file, line, field and value."""
    data, lines = load_yaml(path)
    file = str(path)
    spec = validate(FleetSpec, data, file, lines)
    if soc_mix:
        phones = [Phone(soc=s, share=w) for s, w in soc_mix.items()]
        spec = spec.model_copy(update={"population": spec.population.model_copy(update={"phones": phones})})
    _check_names(spec, file, lines)
    return spec


def parse_soc_mix(text: str) -> dict[str, float]:
    """``sd865=0.6,sd888=0.4`` (a bare name weighs 1) -> {soc: share}; InputError naming --soc-mix."""
    out: dict[str, float] = {}
    for item in text.split(","):
        name, eq, w = item.strip().partition("=")
        if not name:
            raise InputError("expected soc=share,soc=share,... (an empty entry)", field="--soc-mix", value=text)
        try:
            share = float(w) if eq else 1.0
        except ValueError:
            raise InputError(f"share of {name!r} is not a number", field="--soc-mix", value=text) from None
        if not share > 0 or share == float("inf"):
            raise InputError(f"share of {name!r} must be a positive number", field="--soc-mix", value=text)
        if name in out:
            raise InputError(f"{name!r} is given twice", field="--soc-mix", value=text)
        out[name] = share
    return out
