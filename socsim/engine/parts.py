"""The parts a batch runs as: stretches of its template at one operating point (a batch the
thermal caps leave alone is one part), and what is read off them: busy time, op slices."""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from socsim.engine.template import BatchTemplate

if TYPE_CHECKING:  # pragma: no cover
    from socsim.engine.recorder import Recorder


class Part(NamedTuple):
    """A stretch of a batch at one operating point: offsets [a_s, b_s] of ``tpl``, from
    ``t_s``.  ``training`` is False for a config switch the batch pays before its ops.
    (A named tuple: immutable, and cheap to make once per batch.)"""

    t_s: float
    tpl: BatchTemplate
    a_s: float
    b_s: float
    energy_j: float
    training: bool = True

    @property
    def dur_s(self) -> float:
        return self.b_s - self.a_s


def busy_of(parts: list[Part]) -> tuple[dict[str, float], float]:
    """Busy time per unit of a batch's ops and the time they took."""
    if len(parts) == 1:
        p = parts[0]
        return p.tpl.busy_between(p.a_s, p.b_s), p.dur_s
    busy: dict[str, float] = {}
    for p in parts:
        for k, v in p.tpl.busy_between(p.a_s, p.b_s).items():
            busy[k] = busy.get(k, 0.0) + v
    return busy, sum(p.dur_s for p in parts)


def record_slices(recorder: Recorder, batch: int, parts: list[Part]) -> None:
    """The op slices of a batch's parts (a config switch's always; the ops' for the batches
    the recorder keeps).  An op cut where the frequencies changed is one slice."""
    keep = recorder.keeps_batch(batch)
    out: list[list] = []
    cut: dict[tuple[str, str], list] = {}   # slices running past the previous part's end
    for p in parts:
        if p.training and not keep:
            continue
        whole = p.a_s <= 0.0 and p.b_s >= p.tpl.duration_s
        carried, cut = cut, {}
        for s in p.tpl.slices:
            if whole:
                out.append([s, p.t_s + s.start_s, s.dur_s])
                continue
            s0, s1 = max(s.start_s, p.a_s), min(s.start_s + s.dur_s, p.b_s)
            if s1 - s0 <= 1e-12:
                continue
            row = carried.pop((s.track, s.name), None) if s.start_s < p.a_s else None
            if row is None:
                row = [s, p.t_s + (s0 - p.a_s), 0.0]
                out.append(row)
            row[2] = p.t_s + (s1 - p.a_s) - row[1]
            if s.start_s + s.dur_s > p.b_s:
                cut[(s.track, s.name)] = row
    for s, start, dur in out:
        recorder.op_slice(s.track, s.name, s.kind, batch, s.phase, start, dur)
