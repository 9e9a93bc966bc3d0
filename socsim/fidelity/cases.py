"""What a measurement file becomes: socsim runs, each with the figures measured on the phone,
grouped in tables, and the ratios between runs that a table compares instead."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Case:
    """One row: the socsim run that stands for a measured configuration, and its figures."""

    table: str
    id: str
    where: str                      # the row's field path in the file, for errors
    line: int | None
    soc: str
    model: str
    input: tuple[int, ...]
    num_classes: int
    batch: int
    mode: str
    scheduler: str
    cores: Any                      # socsim core set name, core ids, or None (the scheduler's)
    freq: Any                       # max|mid|min, MHz, or {cluster: MHz}
    governor: str
    time_s: float
    energy_j: float | None = None
    device: str = ""
    # the phone's own background work, {little, big} as the row states it (None: not stated,
    # the fitted default; a domain left out of it likewise)
    background: tuple[tuple[str, float | None], ...] | None = None
    # the scheduler's options the row states, (name, value) pairs (ncnn's thread count where it
    # exceeds the cores)
    options: tuple[tuple[str, Any], ...] = ()

    def run_key(self) -> tuple:
        """What makes two rows the same simulation."""
        freq = tuple(sorted(self.freq.items())) if isinstance(self.freq, dict) else self.freq
        cores = tuple(self.cores) if isinstance(self.cores, list) else self.cores
        return (self.soc, self.model, self.input, self.num_classes, self.batch, self.mode, self.scheduler,
                cores, freq, self.governor, self.background, self.options)

    def config(self) -> str:
        """The run in a few words: scheduler, cores, frequencies."""
        cores = self.cores if isinstance(self.cores, str) or self.cores is None else "".join(map(str, self.cores))
        if isinstance(self.freq, dict):
            freq = "/".join(f"{k} {v:g}" for k, v in self.freq.items())
        else:
            freq = self.freq if isinstance(self.freq, str) else f"{self.freq:g} MHz"
        parts = [self.scheduler, cores or "", freq if self.governor == "userspace" else self.governor]
        parts.extend(f"{k} {v}" for k, v in self.options)
        if self.background is not None:
            parts.append("background " + "/".join(f"{k} {v:g}" for k, v in self.background if v is not None))
        return " ".join(p for p in parts if p)


@dataclass(frozen=True)
class RatioCase:
    """A measured ratio of two rows' times (numerator row over denominator row)."""

    table: str
    kind: str
    name: str
    num: str
    den: str
    where: str
    measured: float
    # why a measurement of this ratio contradicts the same phone's other runs ("" when none
    # does): shown in the report, kept out of the table's MAPE and tau (docs/fidelity.md)
    contradicted: str = ""


@dataclass
class TableCases:
    name: str
    compare: str                    # "absolute" or "ratios"
    cases: list[Case]
    ratios: list[RatioCase] = field(default_factory=list)


@dataclass
class Suite:
    """A measurement file, read: its tables, what it holds that socsim cannot simulate (and
    why), and notes on how rows were mapped to runs."""

    file: str
    format: str
    source: str
    tables: list[TableCases]
    skipped: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
