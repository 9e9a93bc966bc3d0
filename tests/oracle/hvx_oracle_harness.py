"""Helpers for differential tests against qemu-hexagon (docs/oracles.md section 1).

``toolchain()`` finds clang, ld.lld and qemu-hexagon; tests skip without them unless CI=true,
where they fail.  ``build(source)`` compiles a freestanding HVX program once per source text
(binaries are cached in a temp directory keyed by the source hash) and ``run(binary, stdin)``
runs it under qemu-hexagon, feeding a whole batch of cases through stdin in one process.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

CFLAGS = ["--target=hexagon", "-mcpu=hexagonv66", "-mhvx", "-mhvx-length=128b", "-O2",
          "-ffreestanding", "-nostdlib", "-static", "-fuse-ld=lld"]

# Minimal freestanding runtime: Linux syscalls through trap0, stdin slurped into a buffer.
RUNTIME = r"""
#include <hexagon_types.h>
#include <hexagon_protos.h>
static long sys3(long n, long a, long b, long c) {
  register long r0 asm("r0") = a; register long r1 asm("r1") = b;
  register long r2 asm("r2") = c; register long r6 asm("r6") = n;
  asm volatile("trap0(#1)" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r6) : "memory");
  return r0;
}
static long read_all(unsigned char *buf, long cap) {
  long n = 0;
  for (;;) { long r = sys3(63, 0, (long)(buf + n), cap - n); if (r <= 0) break; n += r; }
  return n;
}
static void write_all(const unsigned char *buf, long n) {
  while (n > 0) { long r = sys3(64, 1, (long)buf, n); if (r <= 0) break; buf += r; n -= r; }
}
static void sys_exit(int code) { sys3(93, code, 0, 0); for (;;) {} }
"""


def toolchain():
    """Paths of (clang, ld.lld, qemu-hexagon), or None when any is missing."""
    found = [shutil.which("clang"), shutil.which("ld.lld"), shutil.which("qemu-hexagon")]
    return None if None in found else tuple(found)


def require_toolchain():
    tc = toolchain()
    if tc is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("clang / ld.lld / qemu-hexagon missing but CI=true: the HVX oracle must run in CI")
        pytest.skip("clang, ld.lld or qemu-hexagon not installed")
    return tc


def _cache_dir() -> Path:
    d = Path(tempfile.gettempdir()) / f"socsim-hvx-oracle-{os.getuid()}"
    d.mkdir(exist_ok=True)
    return d


def build(source: str, name: str = "prog") -> Path:
    """Compile ``source`` (once; cached by content hash) and return the binary's path."""
    digest = hashlib.sha256((source + " ".join(CFLAGS)).encode()).hexdigest()[:16]
    out = _cache_dir() / f"{name}-{digest}"
    if out.exists():
        return out
    src = out.with_suffix(".c")
    src.write_text(source)
    tmp = out.with_suffix(".tmp")
    res = subprocess.run(["clang", *CFLAGS, "-o", str(tmp), str(src)], capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"clang failed for {src}:\n{res.stderr[-4000:]}")
    tmp.replace(out)
    return out


def run(binary: Path, stdin: bytes, timeout: float = 300) -> bytes:
    res = subprocess.run(["qemu-hexagon", str(binary)], input=stdin, capture_output=True, timeout=timeout)
    if res.returncode != 0:
        raise RuntimeError(f"qemu-hexagon {binary} exited {res.returncode}: {res.stderr[-2000:]!r}")
    return res.stdout
