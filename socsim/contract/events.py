"""What the engine tells a scheduler's runtime hooks: a finished batch, a thermal trip, a
foreground app starting or ending."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BatchRecord:
    """What the engine tells ``on_batch_end`` about a finished batch."""

    batch: int
    start_s: float
    time_s: float
    energy_j: float
    plan_label: str
    interference: bool


@dataclass(frozen=True, slots=True)
class ThermalEvent:
    """A thermal zone crossing a trip point (``on_thermal_trip``), with the governor's new caps."""

    t_s: float
    zone: str
    temp_c: float
    trip: int          # index of the trip point crossed
    rising: bool
    caps_mhz: tuple[tuple[str, float], ...]


@dataclass(frozen=True, slots=True)
class InterferenceEvent:
    """A foreground app (``environment.foreground_load``) starting or ending (``on_interference``)."""

    t_s: float
    cores: tuple[int, ...]
    utilization: float
    started: bool
    name: str
