"""Fixtures of the report tests: one synthetic run directory per session."""
from __future__ import annotations

import pytest

from report_synthetic import SyntheticRun, write_synthetic_run


@pytest.fixture(scope="session")
def synthetic_run(tmp_path_factory: pytest.TempPathFactory) -> SyntheticRun:
    return write_synthetic_run(tmp_path_factory.mktemp("run"))
