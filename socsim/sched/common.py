"""Plan-building pieces' old home, kept for plugins that import them from here; they live in
:mod:`socsim.contract.builders` (also exported by :mod:`socsim.contract`)."""
from __future__ import annotations

from socsim.contract.builders import all_on, single_unit_plan, step_memory, units_of  # noqa: F401
