"""The clients of a fleet: each one's phone, scheduler, link, data size, starting charge and
daily availability window, a pure function of (fleet spec, client id, seed)."""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from socsim.errors import InputError
from socsim.fleet.spec import FleetSpec, Spread, bounds

#: the generator's stream tag for clients (rounds use their own, socsim.fleet.rounds)
CLIENT_STREAM = 1


@dataclass(frozen=True)
class Window:
    """A daily window of ``hours`` from ``start_h`` (wrapping past midnight)."""

    start_h: float
    hours: float
    charging: bool

    def holds(self, hour: float) -> bool:
        """Whether ``hour`` of the day falls in the window."""
        return self.hours >= 24.0 or (hour - self.start_h) % 24.0 < self.hours


@dataclass(frozen=True)
class Client:
    id: int
    soc: str
    scheduler: str
    options_json: str   # the scheduler's options as canonical JSON (hashable)
    link: str
    samples: int
    initial_soc: float
    windows: tuple[Window, ...]

    def available(self, hour: float) -> Window | None:
        """The window holding ``hour``, if any."""
        return next((w for w in self.windows if w.holds(hour)), None)


def _draw(rng: np.random.Generator, v: Spread) -> float:
    lo, hi = bounds(v)
    return lo if lo == hi else float(rng.uniform(lo, hi))


def make_clients(spec: FleetSpec, fleet_file: str | Path | None = None) -> list[Client]:
    """Every client of the population, in id order (the same spec and seed, the same clients)."""
    pop = spec.population
    shares = np.array([p.share for p in pop.phones], float)
    cum = np.cumsum(shares / shares.sum())
    trace = _read_trace(pop.availability.trace, fleet_file, pop.clients) if pop.availability.trace else None
    av = pop.availability
    out = []
    for cid in range(pop.clients):
        rng = np.random.default_rng([spec.seed, CLIENT_STREAM, cid])
        phone = pop.phones[min(int(np.searchsorted(cum, rng.random(), side="right")), len(pop.phones) - 1)]
        sched = phone.scheduler or pop.scheduler
        samples = max(1, int(round(_draw(rng, pop.samples))))
        soc0 = _draw(rng, pop.initial_soc)
        start, hours = _draw(rng, av.window_start_h), _draw(rng, av.window_hours)
        charging = bool(rng.random() < av.charging_share)
        windows = trace.get(cid, ()) if trace is not None else \
            (Window(start, hours, charging),)
        out.append(Client(cid, phone.soc, sched.name, json.dumps(sched.options, sort_keys=True),
                          phone.link or pop.link, samples, soc0, tuple(windows)))
    return out


def _read_trace(name: str, fleet_file: str | Path | None, clients: int) -> dict[int, tuple[Window, ...]]:
    """An availability trace: CSV rows ``client,start_h,end_h,charging`` (a header row first);
    a client may have several windows, a client without a row is never available.  A relative
    path is read beside the fleet file."""
    path = Path(name)
    if not path.is_absolute() and fleet_file is not None:
        path = Path(fleet_file).parent / path
    field = "population.availability.trace"
    try:
        text = path.read_text()
    except OSError as e:
        raise InputError(f"cannot read the availability trace: {e.strerror or e}", file=str(fleet_file),
                         field=field, value=name) from None
    rows = list(csv.reader(text.splitlines()))
    if not rows or [c.strip() for c in rows[0]] != ["client", "start_h", "end_h", "charging"]:
        raise InputError("expected the header client,start_h,end_h,charging", file=str(path), line=1)
    out: dict[int, list[Window]] = {}
    for n, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != 4:
            raise InputError(f"expected 4 columns, got {len(row)}", file=str(path), line=n, value=",".join(row))
        names = ("client", "start_h", "end_h", "charging")
        try:
            cid = int(row[0])
            start, end = float(row[1]), float(row[2])
            charging = {"0": False, "1": True, "false": False, "true": True}[row[3].strip().lower()]
        except (ValueError, KeyError):
            bad = next(i for i, f in enumerate((int, float, float, None)) if not _parses(row[i], f))
            raise InputError("not a number" if bad < 3 else "expected 0, 1, true or false", file=str(path),
                             line=n, field=names[bad], value=row[bad]) from None
        if not 0 <= cid < clients:
            raise InputError(f"no such client (the population has {clients}: 0..{clients - 1})", file=str(path),
                             line=n, field="client", value=cid)
        for f, v in (("start_h", start), ("end_h", end)):
            if not 0 <= v <= 24:
                raise InputError("an hour of the day must lie within 0..24", file=str(path), line=n, field=f, value=v)
        hours = 24.0 if end - start >= 24 else (end - start) % 24.0
        out.setdefault(cid, []).append(Window(start, hours, charging))
    return {k: tuple(v) for k, v in out.items()}


def _parses(text: str, kind) -> bool:
    if kind is None:
        return text.strip().lower() in ("0", "1", "true", "false")
    try:
        kind(text)
        return True
    except ValueError:
        return False
