"""Suite-wide settings.

Hypothesis: locally every run draws new examples (a failure is kept in the example database
and replayed first next time); under CI (``CI`` set, as ``.ci/run`` does) the examples are
derived from each test's name, so a submission's CI result does not depend on chance and a
failure there reproduces with ``CI=true python -m pytest <test>``.

Memory-profile store (socsim.hw.profile_store): the suite uses a fresh one, made by the first
process (the xdist controller) and shared with its workers and the CLI subprocesses they start
through the environment, so no test depends on what earlier runs left in ~/.cache/socsim.
Set SOCSIM_CACHE_DIR to choose it (it is then neither emptied nor removed).  The fresh store is
marked as having the kernels compiled (socsim.kernels), so no test's output depends on whether
it was the session's first run ("compiling kernels once"; tests/e2e/test_cli_warmup.py checks that).
"""
import os
import shutil
import tempfile

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


_OWN_STORE: str | None = None


def pytest_configure(config):
    global _OWN_STORE
    if not os.environ.get("SOCSIM_CACHE_DIR") and not hasattr(config, "workerinput"):
        _OWN_STORE = tempfile.mkdtemp(prefix="socsim-test-store-")
        os.environ["SOCSIM_CACHE_DIR"] = _OWN_STORE
        from socsim import kernels

        kernels.mark_compiled()


def pytest_unconfigure(config):
    if _OWN_STORE:
        shutil.rmtree(_OWN_STORE, ignore_errors=True)
