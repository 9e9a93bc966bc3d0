"""How close socsim's runs come to measurements on real phones (``socsim fidelity``).

:func:`load_measurements` reads a measurement file (docs/fidelity.md), :func:`evaluate` runs
and compares it, :mod:`~socsim.fidelity.render` prints or writes the result.
"""
from socsim.fidelity.evaluate import DEFAULT_BATCHES, evaluate
from socsim.fidelity.loader import load_measurements

__all__ = ["DEFAULT_BATCHES", "evaluate", "load_measurements"]
