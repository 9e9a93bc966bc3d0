"""INT8 GEMM: socsim's HVX emulator vs the same vrmpy GEMM compiled by clang and run on qemu-hexagon.

Like with like: both sides compute the same C = A @ B (M x K x N, 512 x 1024 x 1024 by default)
on the same inputs, with the same 4-row x 128-column register blocking (16 int32 accumulators,
B packed as [k/4][32 columns][4 k] vectors biased by +128, the -128 * rowsum(A) correction
computed in the kernel by vrmpy with a vector of ones and a vror/vadd tree), and both results
are checked (the emulator's against numpy, qemu's by a checksum of C against numpy's).

* Emulator: ``isa.kernels.gemm.gemm_hvx`` (values and cycle counts), the best of ``--repeat``
  runs in this process after a warm-up (numba), on the CPU threads numba is allowed
  (NUMBA_NUM_THREADS; printed).  Wall seconds and CPU seconds (``time.process_time``, every
  thread of the process) of the same run.
* qemu-hexagon: a freestanding C kernel, ``Q6_Vw_vrmpyacc_VwVubRb`` in the same 4x128 tile loop,
  built twice: once computing the GEMM ``--gemms`` times, once computing nothing (start-up and
  the input fill only).  The second's time is subtracted from the first's (best of ``--qemu-runs``
  each, wall and CPU seconds of the child process from ``getrusage``).  qemu-user runs the guest
  on one host thread.

Rates are multiply-accumulates per second.  The last line is
``emulator_mac_per_s=... qemu_mac_per_s=... ratio=...``, both per CPU-second (the ratio
compares the work each does for a second of one CPU); the line before it gives the per-wall-
second rates.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from isa.kernels import gemm, reference  # noqa: E402

CFLAGS = ["--target=hexagon", "-mcpu=hexagonv66", "-mhvx", "-mhvx-length=128b", "-O2",
          "-ffreestanding", "-nostdlib", "-static", "-fuse-ld=lld"]

# The same tile program as isa.kernels.gemm.build_gemm_tile, in C with HVX intrinsics.
QEMU_SRC = r"""
#include <hexagon_types.h>
#include <hexagon_protos.h>
#define M @M@
#define K @K@
#define N @N@
#define K4 (K / 4)
#define NT (N / 128)
static long sys3(long n, long a, long b, long c) {
  register long r0 asm("r0") = a; register long r1 asm("r1") = b;
  register long r2 asm("r2") = c; register long r6 asm("r6") = n;
  asm volatile("trap0(#1)" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r6) : "memory");
  return r0;
}
static signed char A[M][K] __attribute__((aligned(128)));
static HVX_Vector BP[NT][K4][4];              /* [column block][k/4][32 columns][4 k], biased */
static HVX_Vector C[NT][M / 4][16];           /* one 4x128 int32 tile per (column block, row block) */
void _start(void) {
  for (int i = 0; i < M; i++) for (int k = 0; k < K; k++) A[i][k] = (signed char)(i * 7 + k * 3);
  unsigned char *bp = (unsigned char *)BP;
  for (int j = 0; j < NT; j++) for (int g = 0; g < K4; g++) for (int c = 0; c < 128; c++)
    for (int q = 0; q < 4; q++) {
      int k = 4 * g + q, n = 128 * j + c;
      *bp++ = (unsigned char)((signed char)((k * N + n) * 13) + 128);
    }
  const HVX_Vector ones = Q6_V_vsplat_R(0x01010101);
  const HVX_Vector zero = Q6_V_vzero();
  for (int rep = 0; rep < @GEMMS@; rep++)
  for (int j = 0; j < NT; j++)
    for (int i = 0; i < M / 4; i++) {
      HVX_Vector corr[4];
      for (int r = 0; r < 4; r++) {                 /* -128 * rowsum(A[row]) in every lane */
        const HVX_Vector *av = (const HVX_Vector *)A[4 * i + r];
        HVX_Vector s = zero;
        for (int v = 0; v < K / 128; v++) s = Q6_Vw_vrmpyacc_VwVbVb(s, av[v], ones);
        for (int sh = 64; sh >= 4; sh >>= 1) s = Q6_Vw_vadd_VwVw(s, Q6_V_vror_VR(s, sh));
        corr[r] = Q6_Vw_vsub_VwVw(zero, Q6_Vw_vasl_VwR(s, 7));
      }
      /* 16 accumulators in registers: rows 0-3 x 32-column blocks 0-3 */
#define ROW(r) HVX_Vector c##r##0 = corr[r], c##r##1 = corr[r], c##r##2 = corr[r], c##r##3 = corr[r]; \
               const int *a##r = (const int *)A[4 * i + r];
      ROW(0) ROW(1) ROW(2) ROW(3)
      const HVX_Vector *b = BP[j][0];
      for (int g = 0; g < K4; g++, b += 4) {
        HVX_Vector b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];
#define MAC(r) { int x = a##r[g]; \
          c##r##0 = Q6_Vw_vrmpyacc_VwVubRb(c##r##0, b0, x); c##r##1 = Q6_Vw_vrmpyacc_VwVubRb(c##r##1, b1, x); \
          c##r##2 = Q6_Vw_vrmpyacc_VwVubRb(c##r##2, b2, x); c##r##3 = Q6_Vw_vrmpyacc_VwVubRb(c##r##3, b3, x); }
        MAC(0) MAC(1) MAC(2) MAC(3)
      }
      HVX_Vector *o = C[j][i];
#define STORE(r) o[4 * r] = c##r##0; o[4 * r + 1] = c##r##1; o[4 * r + 2] = c##r##2; o[4 * r + 3] = c##r##3;
      STORE(0) STORE(1) STORE(2) STORE(3)
    }
  unsigned sum = 0;                             /* sum of C[x] * (2x + 1), x in storage order */
  const unsigned *cw = (const unsigned *)C;
  for (unsigned x = 0; x < (unsigned)M * N; x++) sum += cw[x] * (2 * x + 1);
  sys3(64, 1, (long)&sum, 4);
  sys3(93, 0, 0, 0);
}
"""


def inputs(m: int, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The inputs the C program fills in: A[i, k] = i*7 + k*3, B[k, n] = (k*N + n)*13 (as int8)."""
    i, kk = np.meshgrid(np.arange(m, dtype=np.int64), np.arange(k, dtype=np.int64), indexing="ij")
    a = ((i * 7 + kk * 3) & 0xFF).astype(np.uint8).view(np.int8)
    kk, nn = np.meshgrid(np.arange(k, dtype=np.int64), np.arange(n, dtype=np.int64), indexing="ij")
    b = (((kk * n + nn) * 13) & 0xFF).astype(np.uint8).view(np.int8)
    return a, b


def checksum(c: np.ndarray) -> int:
    """The C program's checksum of C [M, N]: sum of C[x] * (2x + 1) mod 2**32 over its storage order
    ([column block][row block][4 rows][128 columns], the emulator's tile order)."""
    m, n = c.shape
    w = c.reshape(m // 4, 4, n // 128, 128).transpose(2, 0, 1, 3).ravel().astype(np.int64) & 0xFFFFFFFF
    x = np.arange(w.size, dtype=np.int64)
    return int((w * (2 * x + 1) & 0xFFFFFFFF).sum() & 0xFFFFFFFF)


def build(d: Path, m: int, k: int, n: int, gemms: int) -> Path:
    src = d / f"gemm{gemms}.c"
    src.write_text(QEMU_SRC.replace("@M@", str(m)).replace("@K@", str(k)).replace("@N@", str(n))
                   .replace("@GEMMS@", str(gemms)))
    exe = d / f"gemm{gemms}"
    subprocess.run(["clang", *CFLAGS, "-o", str(exe), str(src)], check=True)
    return exe


def time_child(cmd: list) -> tuple[float, float, bytes]:
    """(wall s, CPU s of the child, its stdout)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True).stdout
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), out


def qemu_side(m: int, k: int, n: int, gemms: int, runs: int, expect: int) -> tuple[float, float, float, float]:
    """(GEMM wall s, GEMM CPU s, start-up wall s, start-up CPU s), start-up subtracted, per GEMM."""
    if not (shutil.which("clang") and shutil.which("qemu-hexagon")):
        raise SystemExit("clang / qemu-hexagon missing")
    d = Path(tempfile.mkdtemp(prefix="hvx_gemm_bench"))
    full, empty = build(d, m, k, n, gemms), build(d, m, k, n, 0)
    best = {}
    for exe in (full, empty):
        for _ in range(runs):
            wall, cpu, out = time_child(["qemu-hexagon", str(exe)])
            if exe is full and int.from_bytes(out[:4], "little") != expect:
                raise SystemExit(f"qemu GEMM checksum {int.from_bytes(out[:4], 'little')} != numpy's {expect}")
            w0, c0 = best.get(exe, (float("inf"), float("inf")))
            best[exe] = (min(w0, wall), min(c0, cpu))
    shutil.rmtree(d, ignore_errors=True)
    (fw, fc), (ew, ec) = best[full], best[empty]
    return (fw - ew) / gemms, (fc - ec) / gemms, ew, ec


def emulator_side(a: np.ndarray, b: np.ndarray, repeat: int):
    """(best wall s, best CPU s (each the best of ``repeat`` runs), timing) of gemm_hvx(a, b)."""
    c, t = gemm.gemm_hvx(a, b)                      # warm-up (numba), and the correctness check
    assert (c == reference.gemm(a, b)).all()
    best_wall = best_cpu = float("inf")
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        c, timing = gemm.gemm_hvx(a, b)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        best_wall, best_cpu = min(best_wall, wall), min(best_cpu, cpu)
    return best_wall, best_cpu, timing


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=512)
    ap.add_argument("--k", type=int, default=1024)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--gemms", type=int, default=2, help="GEMMs per qemu run")
    ap.add_argument("--qemu-runs", type=int, default=3, help="runs of each qemu binary; the best counts")
    ap.add_argument("--repeat", type=int, default=10, help="emulator runs; the best counts")
    args = ap.parse_args()
    m, k, n = args.m, args.k, args.n
    if m % 4 or k % 128 or n % 128:
        raise SystemExit("--m must be a multiple of 4, --k and --n of 128 (the C kernel has no edge tiles)")
    macs = m * k * n
    a, b = inputs(m, k, n)
    expect = checksum(reference.gemm(a, b))
    import numba
    threads = min(os.cpu_count() or 1, numba.config.NUMBA_NUM_THREADS)
    ew, ec, timing = emulator_side(a, b, args.repeat)
    print(f"emulator: {m}x{k}x{n} GEMM, 4x128 tiles, {timing.cycles} simulated HVX cycles "
          f"({timing.packets} packets, stalls {dict(timing.stalls)}); {threads} threads; "
          f"best of {args.repeat}: {ew:.4f} s wall, {ec:.4f} CPU s")
    qw, qc, sw, sc = qemu_side(m, k, n, args.gemms, args.qemu_runs, expect)
    print(f"qemu-hexagon: {m}x{k}x{n} GEMM, 4x128 tiles, 1 thread; {qw:.4f} s wall, {qc:.4f} CPU s per GEMM "
          f"(best of {args.qemu_runs} runs of {args.gemms} GEMMs, less start-up and input fill {sw:.3f} s wall, "
          f"{sc:.3f} CPU s); checksum {expect:#010x} as numpy's")
    print(f"per wall second: emulator {macs / ew:.4g} qemu {macs / qw:.4g} ratio {qw / ew:.3g}")
    print(f"emulator_mac_per_s={macs / ec:.4g} qemu_mac_per_s={macs / qc:.4g} ratio={qc / ec:.3g}")


if __name__ == "__main__":
    main()
