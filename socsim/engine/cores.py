"""The core-set and operating-point helpers' old home, kept for plugins that import them from
here (docs/plugins.md once said to); they live in :mod:`socsim.contract.cores`."""
from __future__ import annotations

from socsim.contract.cores import (UNKNOWN_CORE_SET, big_cores, check_clusters_mhz, check_freq_setting,  # noqa: F401
                                   check_unit_mhz, clusters_of, core_set_error, is_core_set_name,
                                   little_cores, opp_for, pick_opp, resolve_cores)
