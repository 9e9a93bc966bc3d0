"""On-disk store of op profiles, so a second run does not re-simulate the caches or re-time
the HVX kernels.

Nearly all of a run's set-up is costing its ops: the cache simulation of every op's access
stream on every core set a scheduler profiles (Swan: 8 core sets of MobileNet-v2, ~23 s of a
29 s run), and on the DSP the HVX emulator's timing of each kernel shape.  Each result is a pure
function of what it is memoised on in the process (a memory profile,
:class:`socsim.hw.memory.MemProfile`: the op's stream key and byte counts, the cache
geometries, the threads, the sampling budget; an HVX timing: the kernel's kind and shape) and of
the code that computes it.  This module keeps those results in SQLite files, one per namespace
('memprofiles', 'hvxprofiles'), keyed by a digest of the arguments, each file named after a
digest of its namespace's source (:data:`NAMESPACES`), so a changed simulator or emulator never
reads an old result.  A result read back is the one computed: every field is an int, a str or
a float written with ``repr`` (exact round trip), so summaries and traces are byte-identical
with a cold, a warm or no store.

Where: ``$SOCSIM_CACHE_DIR``, else ``$XDG_CACHE_HOME/socsim``, else ``~/.cache/socsim``.
``SOCSIM_CACHE=off`` turns it off.  Each entry carries a checksum of its value: an entry that
does not match is dropped and computed again.  A store file that is damaged (fails SQLite's
quick_check, is not a database, or is a directory or a dangling link) is moved aside to
``<file>.damaged`` and rebuilt, with one warning on stderr.  Other trouble (an unwritable
directory, a locked database) turns the store off for the process and the profiles are computed
as without it: the store can make a run faster, never different or failed.  Deleting the
directory is always safe.
"""
from __future__ import annotations

import hashlib
import json
import numbers
import os
import shutil
import sqlite3
import sys
import threading
from contextlib import closing
from functools import lru_cache
from pathlib import Path

from socsim.hw.cache.hierarchy import LevelStats
from socsim.paths import cache_dir  # noqa: F401  (socsim.hw.profile_store.cache_dir, as before)
from socsim.hw.memprofile import MemProfile

# Seconds an SQLite call waits for another process's write lock (parallel test workers, a
# sweep's workers) before giving up on the store for this process.
LOCK_TIMEOUT_S = 10.0

_HW = Path(__file__).resolve().parent
_ROOT = _HW.parent.parent


def _sources_mem() -> list[Path]:
    """The code a memory profile depends on: the cache simulator, the stream plans, the sampler,
    the op description and the op-kinds table the plans read (and this file's codec)."""
    return sorted((_HW / "cache").glob("*.py")) + [_HW / "memory.py", _HW / "memprofile.py",
                                                   _HW.parent / "workload" / "ops.py",
                                                   _HW.parent / "workload" / "opkinds.py"]


def _sources_hvx() -> list[Path]:
    """The code an HVX kernel timing depends on: the emulator, its timing model and the kernels
    (``isa/``; the key holds the kernel's kind and shape)."""
    import isa

    return sorted(Path(isa.__file__).resolve().parent.rglob("*.py"))


# namespace -> the sources its results depend on; each namespace is a file of its own
NAMESPACES = {"memprofiles": _sources_mem, "hvxprofiles": _sources_hvx}


class _Db:
    """One namespace's connection and state (unopened | open | off) in this process."""

    def __init__(self) -> None:
        self.conn: sqlite3.Connection | None = None
        self.state = "unopened"
        self.pid = 0          # the process that opened conn (a forked worker opens its own)


_lock = threading.Lock()
_dbs: dict[str, _Db] = {ns: _Db() for ns in NAMESPACES}
_digests: dict[str, str] = {}


def _source_digest(ns: str = "memprofiles") -> str:
    if ns not in _digests:
        h = hashlib.sha256()
        for f in NAMESPACES[ns]() + [Path(__file__).resolve()]:
            h.update(str(f.relative_to(_ROOT) if f.is_relative_to(_ROOT) else f.name).encode())
            h.update(f.read_bytes())
        _digests[ns] = h.hexdigest()[:16]
    return _digests[ns]




def enabled() -> bool:
    return os.environ.get("SOCSIM_CACHE", "").strip().lower() not in ("off", "0", "no", "false")


def path(ns: str = "memprofiles") -> Path:
    """The store's file of namespace ``ns`` for this version of its sources."""
    return cache_dir() / f"{ns}-{_source_digest(ns)}.sqlite"


def _checksum(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _damage(p: Path) -> str | None:
    """Why the store file ``p`` is damaged, or None when it is sound or absent (a lock or a
    permission problem is not damage)."""
    if p.is_symlink() and not p.exists():
        return "a dangling or looping symbolic link"
    if p.is_dir():
        return "a directory"
    if not p.exists():
        return None
    if not p.is_file():
        return "not a regular file"
    try:
        with closing(sqlite3.connect(f"file:{p}?mode=ro", uri=True, timeout=LOCK_TIMEOUT_S)) as c:
            rows = c.execute("PRAGMA quick_check").fetchall()
            c.execute("SELECT COUNT(*) FROM profiles").fetchone()
    except UnicodeDecodeError:
        # the check's own message quotes damaged bytes that are not UTF-8
        return "damaged (an integrity check whose message is not text)"
    except sqlite3.DatabaseError as e:
        if isinstance(e, sqlite3.OperationalError) and ("locked" in str(e) or "unable to open" in str(e)):
            return None
        return f"not a readable store ({e})"
    if rows != [("ok",)]:
        return f"damaged ({'; '.join(str(r[0]) for r in rows[:2])})"
    return None


def _move_aside(p: Path, why: str) -> None:
    """Move a damaged store file aside (``<file>.damaged``, replacing an older one) and say so
    once on stderr; the store is rebuilt in its place."""
    aside = p.with_name(p.name + ".damaged")
    if aside.is_dir() and not aside.is_symlink():
        shutil.rmtree(aside, ignore_errors=True)
    os.replace(p, aside)
    for suffix in ("-wal", "-shm"):
        Path(str(p) + suffix).unlink(missing_ok=True)
    print(f"warning: the profile store {p} was {why}; moved it to {aside.name} and started a new one "
          "(runs are as fast as with a cold store until it refills)", file=sys.stderr)


def _open(ns: str) -> sqlite3.Connection | None:
    db = _dbs[ns]
    if db.pid != os.getpid():
        # a forked child must not use its parent's connection (SQLite's rule): drop it unclosed
        db.conn, db.pid = None, os.getpid()
        if db.state == "open":
            db.state = "unopened"
    if db.state == "open" and db.conn is not None:
        return db.conn
    if db.state == "off":
        return None
    if not enabled():
        db.state = "off"
        return None
    try:
        p = path(ns)
        p.parent.mkdir(parents=True, exist_ok=True)
        why = _damage(p)
        if why:
            _move_aside(p, why)
        conn = sqlite3.connect(str(p), timeout=LOCK_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        # WAL lets readers run beside a writer; losing the last writes in a power cut only
        # costs their recomputation (a corrupt file turns the store off, below)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute("CREATE TABLE IF NOT EXISTS profiles (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    except (OSError, sqlite3.Error):
        db.state = "off"
        return None
    db.conn, db.state = conn, "open"
    return conn


def _off(ns: str) -> None:
    db = _dbs[ns]
    db.state = "off"
    if db.conn is not None and db.pid == os.getpid():
        try:
            db.conn.close()
        except sqlite3.Error:
            pass
    db.conn = None


def reset() -> None:
    """Forget the open connections (the environment or the directory changed; tests)."""
    with _lock:
        for ns, db in _dbs.items():
            _off(ns)
            db.state = "unopened"


def key_of(*args) -> str:
    """Digest of a memoisation key (tuples of str, int, float, bool and frozen dataclasses,
    whose ``repr`` is deterministic)."""
    return hashlib.sha256(repr(args).encode()).hexdigest()


def get_text(ns: str, key: str) -> str | None:
    """The text stored under ``key`` in namespace ``ns``, or None."""
    with _lock:
        conn = _open(ns)
        if conn is None:
            return None
        try:
            row = conn.execute("SELECT value FROM profiles WHERE key = ?", (key,)).fetchone()
        except UnicodeDecodeError:
            row = (None,)       # damaged bytes in the value: dropped below like a tampered entry
        except sqlite3.Error:
            _off(ns)
            return None
        if row is None:
            return None
        check, _, text = row[0].partition(":") if row[0] is not None else ("", "", "")
        if row[0] is None or _checksum(text) != check:
            # tampered or torn: drop it, so that it is computed and stored again
            try:
                conn.execute("DELETE FROM profiles WHERE key = ?", (key,))
            except sqlite3.Error:
                _off(ns)
            return None
        return text


def put_text(ns: str, key: str, text: str) -> None:
    with _lock:
        conn = _open(ns)
        if conn is None:
            return
        try:
            conn.execute("INSERT OR IGNORE INTO profiles (key, value) VALUES (?, ?)",
                         (key, f"{_checksum(text)}:{text}"))
        except sqlite3.Error:
            _off(ns)


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


def decode(text: str) -> MemProfile:
    d = json.loads(text)
    levels = tuple(LevelStats(row[0], **dict(zip(_LEVEL_COUNTS, row[1:], strict=True))) for row in d.pop("levels"))
    return MemProfile(levels=levels, **d)


def memoised(ns: str, encode=json.dumps, decode=json.loads, maxsize: int = 4096):
    """Decorator: memoise a pure function of hashable arguments in the process (``lru_cache``)
    and between runs in namespace ``ns``; ``encode``/``decode`` turn a result into text and
    back (exactly).  An entry that does not decode is computed again."""
    def wrap(compute):
        tag = compute.__name__

        @lru_cache(maxsize=maxsize)
        def memo(*args):
            key = key_of(tag, *args)
            text = get_text(ns, key)
            if text is not None:
                try:
                    return decode(text)
                except (ValueError, TypeError, KeyError):
                    pass
            value = compute(*args)
            try:
                put_text(ns, key, encode(value))
            except (TypeError, ValueError):
                pass
            return value

        memo.__wrapped__ = compute
        memo.__doc__ = compute.__doc__
        return memo
    return wrap


def _count(p: Path) -> int:
    """Entries in a store file (0 if absent, -1 if unreadable)."""
    if not os.path.lexists(p):
        return 0
    if not p.is_file():
        return -1
    try:
        with closing(sqlite3.connect(f"file:{p}?mode=ro", uri=True, timeout=LOCK_TIMEOUT_S)) as c:
            return int(c.execute("SELECT COUNT(*) FROM profiles").fetchone()[0])
    except sqlite3.Error:
        return -1


def _files() -> list[Path]:
    d = cache_dir()
    try:
        return sorted(f for ns in NAMESPACES for f in d.glob(f"{ns}-*")) if d.is_dir() else []
    except OSError:
        return []


def _size(f: Path) -> int:
    try:
        return f.stat().st_size if f.is_file() else 0
    except OSError:
        return 0


def status() -> dict:
    """Where the store is and what it holds (``socsim cache``): per namespace, this build's file
    and its entries; the bytes of every store file, older builds' included."""
    return {"enabled": enabled(), "dir": str(cache_dir()),
            "files": {ns: {"file": str(path(ns)), "exists": os.path.lexists(path(ns)),
                           "entries": _count(path(ns)), "damage": _damage(path(ns))}
                      for ns in NAMESPACES},
            "bytes": sum(_size(f) for f in _files())}


def clear() -> int:
    """Delete every store file (this build's and older builds'); returns how many stores."""
    reset()
    n = 0
    for f in _files():
        try:
            if f.is_dir() and not f.is_symlink():
                shutil.rmtree(f)     # whatever sits at a store's path goes
            else:
                f.unlink()
        except OSError:
            continue
        n += f.suffix == ".sqlite"
    return n
