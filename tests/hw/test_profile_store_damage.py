"""A damaged profile store heals itself: a tampered entry is dropped (checksum), a corrupt file,
a directory or a dangling link at the store's path is moved aside and rebuilt with one warning;
``cache show`` reports the damage and ``cache clear`` removes whatever sits there."""
from __future__ import annotations

import os
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from socsim.hw import profile_store

from tests.e2e.cli_helpers import invoke


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("SOCSIM_CACHE_DIR", str(tmp_path / "store"))
    monkeypatch.delenv("SOCSIM_CACHE", raising=False)
    profile_store.reset()
    yield tmp_path / "store"
    profile_store.reset()


def _filled(n: int = 50) -> os.PathLike:
    for i in range(n):
        profile_store.put_text("memprofiles", f"k{i}", "v" * 200 + str(i))
    profile_store.reset()
    return profile_store.path("memprofiles")


def test_a_tampered_entry_is_dropped_not_used(store):
    p = _filled(1)
    with sqlite3.connect(p) as c:
        check, _, text = c.execute("SELECT value FROM profiles WHERE key='k0'").fetchone()[0].partition(":")
        c.execute("UPDATE profiles SET value=? WHERE key='k0'", (f"{check}:{text}X",))
    assert profile_store.get_text("memprofiles", "k0") is None
    profile_store.put_text("memprofiles", "k0", "fresh")
    assert profile_store.get_text("memprofiles", "k0") == "fresh"


def test_random_bytes_in_the_file_move_it_aside_with_one_warning(store, capsys):
    p = _filled()
    with open(p, "r+b") as f:
        f.seek(4096)
        f.write(bytes(range(256)) * 2)
    r = invoke("cache", "show")
    assert r.exit_code == 0 and "DAMAGED" in r.output and "0 entries" not in r.output
    assert profile_store.get_text("memprofiles", "k1") is None     # rebuilt: empty, working
    profile_store.put_text("memprofiles", "k1", "again")
    assert profile_store.get_text("memprofiles", "k1") == "again"
    err = capsys.readouterr().err
    assert err.count("warning: the profile store") == 1 and "moved it to" in err
    assert (p.parent / (p.name + ".damaged")).exists()


@pytest.mark.parametrize("what", ["directory", "dangling link", "link loop"])
def test_something_else_at_the_path_is_reported_replaced_and_cleared(store, what):
    p = profile_store.path("memprofiles")
    p.parent.mkdir(parents=True)
    if what == "directory":
        p.mkdir()
        (p / "x").write_text("x")
    elif what == "dangling link":
        p.symlink_to(store / "nowhere")
    else:
        p.symlink_to(p)
    r = invoke("cache", "show")
    assert r.exit_code == 0 and "DAMAGED" in r.output, r.output
    assert invoke("cache", "clear").exit_code == 0
    assert not os.path.lexists(p)
    profile_store.put_text("memprofiles", "k", "v")
    assert profile_store.get_text("memprofiles", "k") == "v"


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(offset=st.integers(0, 16384), junk=st.binary(min_size=1, max_size=512))
def test_any_damage_never_fails_and_never_returns_a_wrong_value(store, offset, junk):
    profile_store.reset()
    for f in store.glob("*"):
        f.unlink()
    p = _filled(40)
    with open(p, "r+b") as f:
        f.seek(offset)
        f.write(junk)
    for i in range(40):
        got = profile_store.get_text("memprofiles", f"k{i}")
        assert got in (None, "v" * 200 + str(i))
    profile_store.reset()


def test_damage_whose_check_message_is_not_text_moves_the_file_aside(store):
    """A byte 0x80 at offset 4052 (found by hypothesis) makes sqlite's integrity check quote bytes
    that are not UTF-8: still damage, reported as such, never an exception."""
    profile_store.reset()
    for f in store.glob("*"):
        f.unlink()
    p = _filled(40)
    with open(p, "r+b") as f:
        f.seek(4052)
        f.write(b"\x80")
    for i in range(40):
        assert profile_store.get_text("memprofiles", f"k{i}") in (None, "v" * 200 + str(i))
    profile_store.reset()
