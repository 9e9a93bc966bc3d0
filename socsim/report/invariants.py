"""Checks a finished run's summary against physics before it is reported: a result no phone
could produce is an error of the model (or of an implausible spec), never printed as a result."""
from __future__ import annotations

import math
from typing import Any

from socsim.errors import InputError

#: Highest temperature a run may report: 150 C, the maximum junction temperature of silicon
#: logic in the harshest (automotive grade 0) qualification (AEC-Q100 Rev-H, Table 2); a
#: phone's own critical trips sit at 95-115 C (the specs' thermal zones, sm8250.dtsi).
MAX_JUNCTION_C = 150.0


class ModelInvariantError(RuntimeError):
    """The model produced a result that breaks a physical law (an internal error, exit 1)."""


def check_summary(summary: dict[str, Any], spec_file: str | None = None) -> None:
    """Raise if ``summary`` breaks an invariant: any energy negative or not finite
    (:class:`ModelInvariantError`, a bug of the model); a temperature above
    :data:`MAX_JUNCTION_C` (InputError naming the spec: its thermal block lets heat run away)."""
    energy = summary.get("energy_j", {})
    values = {"energy_j.total": energy.get("total", 0.0),
              **{f"energy_j.rails.{k}": v for k, v in energy.get("rails", {}).items()}}
    for name, v in values.items():
        if not math.isfinite(v) or v < 0:
            raise ModelInvariantError(f"model invariant broken: {name} = {v!r} J (energy is finite and never "
                                      "negative); this is a bug of socsim's model, please report it with the "
                                      "spec and workload")
    thermal = summary.get("thermal", {})
    peak = thermal.get("peak_c", 0.0)
    if not math.isfinite(peak) or peak > MAX_JUNCTION_C:
        zones = thermal.get("zones_peak_c", {})
        hot = max(zones, key=zones.get) if zones else None
        where = f" (hottest zone: {hot})" if hot else ""
        raise InputError(f"the run reaches {peak:g} C{where}, above {MAX_JUNCTION_C:g} C, the most any silicon "
                         "survives: this spec's power and thermal blocks let heat run away (a zone that caps "
                         "no cluster on the hot node, too little conductance to ambient, or too much power); "
                         "no phone reports such a result", file=spec_file, field="thermal", value=round(peak, 1))
