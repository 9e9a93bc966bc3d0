"""The port the engine emits through: a :class:`Recorder` receives op slices, instants, samples
and batches (``socsim.report.events.StreamRecorder`` writes them to a run directory)."""
from __future__ import annotations

from typing import Protocol

import numpy as np


class Recorder(Protocol):
    """Receives what the engine emits.  All times are simulated seconds."""

    wants_slices: bool

    def op_slice(self, track: str, name: str, kind: str, batch: int, phase: str,
                 start_s: float, dur_s: float) -> None: ...

    def instant(self, t_s: float, track: str, name: str, detail: str = "") -> None: ...

    def sample(self, t_s: float, values: dict[str, float]) -> None: ...

    def samples(self, columns: list[str], t_s: "np.ndarray", values: "np.ndarray") -> None: ...

    def batch(self, batch: int, start_s: float, time_s: float, energy_j: float, plan: str) -> None: ...

    def keeps_batch(self, batch: int) -> bool: ...

    def close(self) -> None: ...


class NullRecorder:
    """Records nothing (summary-only runs)."""

    wants_slices = False

    def op_slice(self, *a, **k) -> None:  # noqa: D102
        pass

    def instant(self, *a, **k) -> None:  # noqa: D102
        pass

    def sample(self, *a, **k) -> None:  # noqa: D102
        pass

    def samples(self, *a, **k) -> None:  # noqa: D102
        pass

    def batch(self, *a, **k) -> None:  # noqa: D102
        pass

    def keeps_batch(self, batch: int) -> bool:  # noqa: D102
        return False

    def close(self) -> None:  # noqa: D102
        pass
