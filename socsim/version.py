"""socsim's version (a foundation module: the summary records it, ``import socsim`` shows it)."""
from __future__ import annotations

__version__ = "0.1.0"
