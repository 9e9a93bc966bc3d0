"""INT8 GEMM: socsim's HVX emulator vs the same vrmpy GEMM compiled by clang and run on qemu-hexagon.

The emulator runs the isa.kernels.gemm program over a batch of output tiles (values and cycle
counts, checked against numpy; the best of ``--repeat`` runs counts, since other work on the
machine moves single runs); the tile program executes as one compiled region on all CPU threads
numba is allowed (NUMBA_NUM_THREADS).  qemu-hexagon runs a C kernel with Q6_Vw_vrmpyacc_VwVubRb
(M=64, K=256, N=32, repeated).  Both rates are multiply-accumulates per wall-clock second.
The last line is ``emulator_mac_per_s=... qemu_mac_per_s=... ratio=...``.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from isa.kernels import gemm, reference  # noqa: E402

QEMU_SRC = r"""
#include <hexagon_types.h>
#include <hexagon_protos.h>
#define M 64
#define K 256
#define N 32
static long sys3(long n, long a, long b, long c) {
  register long r0 asm("r0") = a; register long r1 asm("r1") = b;
  register long r2 asm("r2") = c; register long r6 asm("r6") = n;
  asm volatile("trap0(#1)" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r6) : "memory");
  return r0;
}
static signed char A[M][K] __attribute__((aligned(128)));
static HVX_Vector B[K / 4] ;                  /* [k/4][32 columns][4 k], biased */
static HVX_Vector C[M];
void _start(void) {
  for (int i = 0; i < M; i++) for (int k = 0; k < K; k++) A[i][k] = (signed char)(i * 7 + k * 3);
  unsigned char *bp = (unsigned char *)B;
  for (int i = 0; i < K * N; i++) bp[i] = (unsigned char)(i * 13);
  long reps = REPS;
  unsigned sum = 0;
  for (long r = 0; r < reps; r++) {
    for (int i = 0; i < M; i++) {
      HVX_Vector acc = Q6_V_vzero();
      const int *a = (const int *)A[i];
      for (int k = 0; k < K / 4; k++) acc = Q6_Vw_vrmpyacc_VwVubRb(acc, B[k], a[k]);
      C[i] = acc;
    }
    sum += ((unsigned *)C)[r & 31];
  }
  sys3(64, 1, (long)&sum, 4);
  sys3(93, 0, 0, 0);
}
"""


def qemu_rate(reps: int) -> float:
    if not (shutil.which("clang") and shutil.which("qemu-hexagon")):
        raise SystemExit("clang / qemu-hexagon missing")
    d = Path(tempfile.mkdtemp(prefix="hvx_gemm_bench"))
    src = d / "gemm.c"
    src.write_text(QEMU_SRC.replace("REPS", str(reps)))
    exe = d / "gemm"
    subprocess.run(["clang", "--target=hexagon", "-mcpu=hexagonv66", "-mhvx", "-mhvx-length=128b", "-O2",
                    "-ffreestanding", "-nostdlib", "-static", "-fuse-ld=lld", "-o", str(exe), str(src)], check=True)
    t0 = time.perf_counter()
    subprocess.run(["qemu-hexagon", str(exe)], check=True, capture_output=True)
    dt = time.perf_counter() - t0
    return 64 * 256 * 32 * reps / dt


def emulator_rate(m: int, k: int, n: int, repeat: int) -> tuple:
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    c, t = gemm.gemm_hvx(a, b)                      # warm-up (numba), and the correctness check
    assert (c == reference.gemm(a, b)).all()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        c, timing = gemm.gemm_hvx(a, b)
        best = min(best, time.perf_counter() - t0)
    return m * k * n / best, timing


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=512)
    ap.add_argument("--k", type=int, default=1024)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=4000, help="qemu GEMM repetitions")
    ap.add_argument("--repeat", type=int, default=10, help="emulator runs; the best one counts")
    args = ap.parse_args()
    emu, timing = emulator_rate(args.m, args.k, args.n, args.repeat)
    print(f"emulator: {args.m}x{args.k}x{args.n} GEMM, {timing.cycles} simulated HVX cycles "
          f"({timing.packets} packets, stalls {dict(timing.stalls)})")
    q = qemu_rate(args.reps)
    print(f"qemu-hexagon: 64x256x32 GEMM x {args.reps}")
    print(f"emulator_mac_per_s={emu:.4g} qemu_mac_per_s={q:.4g} ratio={emu / q:.3g}")


if __name__ == "__main__":
    main()
