import pytest

from hvx_oracle_harness import require_toolchain


@pytest.fixture(scope="session")
def hexagon_toolchain():
    return require_toolchain()
