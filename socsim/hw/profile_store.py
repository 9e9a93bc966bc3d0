"""On-disk store of memory profiles, so a second run does not re-simulate the caches.

Nearly all of a CPU-side run's set-up is the cache simulation of every op's access stream on
every core set a scheduler profiles (Swan: 8 core sets of MobileNet-v2, ~23 s of a 29 s run).
The result of one simulation (:class:`socsim.hw.memory.MemProfile`) is a pure function of what
:mod:`socsim.hw.memory` memoises it on (the op's stream key and byte counts, the cache
geometries, the threads, the sampling budget) and of the simulator's code.  This module keeps
those results in an SQLite file, keyed by a digest of the arguments, in a file named after a
digest of the simulator's source, so a changed simulator never reads an old result.  A result
read back is the one computed: every field is an int, a str or a float written with ``repr``
(exact round trip), so summaries and traces are byte-identical with a cold or a warm store.

Where: ``$SOCSIM_CACHE_DIR``, else ``$XDG_CACHE_HOME/socsim``, else ``~/.cache/socsim``.
``SOCSIM_CACHE=off`` turns it off.  Any trouble with the file (unwritable directory, a
corrupt or locked database) turns the store off for the process and the profiles are computed
as without it: the store can make a run faster, never different or failed.  Deleting the
directory is always safe.
"""
from __future__ import annotations

import hashlib
import json
import numbers
import os
import sqlite3
import threading
from pathlib import Path

from socsim.hw.cache.hierarchy import LevelStats

# Seconds an SQLite call waits for another process's write lock (parallel test workers, a
# sweep's workers) before giving up on the store for this process.
LOCK_TIMEOUT_S = 10.0

_lock = threading.Lock()
_conn: sqlite3.Connection | None = None
_state = "unopened"          # unopened | open | off
_pid = 0                     # the process that opened _conn (a forked worker opens its own)


def _source_digest() -> str:
    """Digest of the code a memory profile depends on (the cache simulator, the stream plans,
    the sampler and the op description)."""
    here = Path(__file__).resolve().parent
    files = sorted((here / "cache").glob("*.py")) + [here / "memory.py", here.parent / "workload" / "ops.py",
                                                     Path(__file__).resolve()]
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    env = os.environ.get("SOCSIM_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "socsim"


def enabled() -> bool:
    return os.environ.get("SOCSIM_CACHE", "").strip().lower() not in ("off", "0", "no", "false")


def path() -> Path:
    """The store's file for this version of the simulator."""
    return cache_dir() / f"memprofiles-{_source_digest()}.sqlite"


def _open() -> sqlite3.Connection | None:
    global _conn, _state, _pid
    if _pid != os.getpid():
        # a forked child must not use its parent's connection (SQLite's rule): drop it unclosed
        _conn, _pid = None, os.getpid()
        if _state == "open":
            _state = "unopened"
    if _state == "open" and _conn is not None:
        return _conn
    if _state == "off":
        return None
    if not enabled():
        _state = "off"
        return None
    try:
        p = path()
        p.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(p), timeout=LOCK_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        # WAL lets readers run beside a writer; losing the last writes in a power cut only
        # costs their recomputation (a corrupt file turns the store off, below)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute("CREATE TABLE IF NOT EXISTS profiles (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    except (OSError, sqlite3.Error):
        _state = "off"
        return None
    _conn, _state = conn, "open"
    return conn


def _off() -> None:
    global _conn, _state
    _state = "off"
    if _conn is not None:
        try:
            _conn.close()
        except sqlite3.Error:
            pass
    _conn = None


def reset() -> None:
    """Forget the open connection (the environment or the directory changed; tests)."""
    global _state
    with _lock:
        _off()
        _state = "unopened"


def key_of(*args) -> str:
    """Digest of a memoisation key (tuples of str, int, float, bool and frozen dataclasses,
    whose ``repr`` is deterministic)."""
    return hashlib.sha256(repr(args).encode()).hexdigest()


_LEVEL_COUNTS = ("read_hits", "read_misses", "write_hits", "write_misses", "writebacks", "fills", "line_bytes")


def _plain(x):
    if isinstance(x, numbers.Integral):
        return int(x)
    if isinstance(x, numbers.Real):
        return float(x)
    return x


def encode(profile) -> str:
    d = {f: _plain(getattr(profile, f)) for f in profile.__slots__ if f != "levels"}
    d["levels"] = [[lv.name] + [int(getattr(lv, f)) for f in _LEVEL_COUNTS] for lv in profile.levels]
    return json.dumps(d, sort_keys=True)


def decode(text: str):
    from socsim.hw.memory import MemProfile

    d = json.loads(text)
    levels = tuple(LevelStats(row[0], **dict(zip(_LEVEL_COUNTS, row[1:], strict=True))) for row in d.pop("levels"))
    return MemProfile(levels=levels, **d)


def get(key: str):
    """The stored profile for ``key``, or None."""
    with _lock:
        conn = _open()
        if conn is None:
            return None
        try:
            row = conn.execute("SELECT value FROM profiles WHERE key = ?", (key,)).fetchone()
            return None if row is None else decode(row[0])
        except (sqlite3.Error, ValueError, TypeError, KeyError):
            _off()
            return None


def put(key: str, profile) -> None:
    with _lock:
        conn = _open()
        if conn is None:
            return
        try:
            conn.execute("INSERT OR IGNORE INTO profiles (key, value) VALUES (?, ?)", (key, encode(profile)))
        except (sqlite3.Error, TypeError, ValueError):
            _off()


def status() -> dict:
    """Where the store is and how much it holds (``socsim cache``)."""
    p = path()
    n = 0
    if p.exists():
        try:
            with sqlite3.connect(f"file:{p}?mode=ro", uri=True, timeout=LOCK_TIMEOUT_S) as c:
                n = c.execute("SELECT COUNT(*) FROM profiles").fetchone()[0]
        except sqlite3.Error:
            n = -1
    return {"enabled": enabled(), "dir": str(cache_dir()), "file": str(p), "profiles": n,
            "bytes": sum(f.stat().st_size for f in cache_dir().glob("memprofiles-*")) if cache_dir().is_dir() else 0}


def clear() -> int:
    """Delete every store file (this build's and older builds'); returns how many."""
    reset()
    d = cache_dir()
    n = 0
    if d.is_dir():
        for f in sorted(d.glob("memprofiles-*")):
            try:
                f.unlink()
            except OSError:
                continue
            n += f.suffix == ".sqlite"
    return n
