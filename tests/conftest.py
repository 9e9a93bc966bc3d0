"""Suite-wide settings.

Hypothesis: locally every run draws new examples (a failure is kept in the example database
and replayed first next time); under CI (``CI`` set, as ``.ci/run`` does) the examples are
derived from each test's name, so a submission's CI result does not depend on chance and a
failure there reproduces with ``CI=true python -m pytest <test>``.
"""
import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
