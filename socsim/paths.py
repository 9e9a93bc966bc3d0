"""Where socsim keeps what it caches between runs (the profile store, socsim.hw.profile_store,
and the compiled kernels' marker, socsim.kernels): a module of its own, so that finding it
imports nothing heavy (a cold run's first step, socsim.kernels.prefetch, reads it before numba
is imported)."""
from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``SOCSIM_CACHE_DIR``, else ``$XDG_CACHE_HOME/socsim``, else ``~/.cache/socsim``."""
    env = os.environ.get("SOCSIM_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "socsim"
