"""Fixtures shared by the memory-model tests."""
import pytest

from socsim.hw import memory, profile_store


@pytest.fixture(scope="module")
def no_store():
    """The on-disk profile store off: each profile here is computed in this process (the
    process's memos cleared afterwards, so later modules see fresh simulations)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOCSIM_CACHE", "off")
        profile_store.reset()
        yield
    profile_store.reset()
    memory._cpu_memory.cache_clear()
    memory._dsp_memory.cache_clear()
