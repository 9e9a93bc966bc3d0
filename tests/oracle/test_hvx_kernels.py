"""The GEMM and conv2d kernels, written in C with Q6 intrinsics and run on qemu-hexagon, give the
same int32 results as the emulated HVX programs (and numpy)."""
from __future__ import annotations

import numpy as np
import pytest

from hvx_oracle_harness import RUNTIME, build, run
from isa.kernels import conv, gemm, reference as ref
from isa.kernels.layout import Geometry, pad_planes, phase_planes_ref, rup, tap_planes, untile_outputs

pytestmark = pytest.mark.oracle

GEMM_C = RUNTIME + r"""
static unsigned char in[8 << 20] __attribute__((aligned(128)));
static int out[2 << 20] __attribute__((aligned(128)));
void _start(void) {
  read_all(in, sizeof in);
  const int *h = (const int *)in;
  int M = h[0], K4 = h[1], NT = h[2], KA = h[3];
  const signed char *A = (const signed char *)(in + 128);
  const HVX_Vector *B = (const HVX_Vector *)(in + 128 + M * KA);
  for (int r = 0; r < M; r++) {
    int s = 0;
    for (int k = 0; k < KA; k++) s += A[r * KA + k];
    for (int t = 0; t < NT; t++) {
      for (int nb = 0; nb < 4; nb++) {
        HVX_Vector acc = Q6_V_vsplat_R(-128 * s);
        const int *a = (const int *)(A + r * KA);
        for (int k = 0; k < K4; k++)
          acc = Q6_Vw_vrmpyacc_VwVubRb(acc, B[(t * K4 + k) * 4 + nb], a[k]);
        *(HVX_Vector *)(out + r * NT * 128 + t * 128 + nb * 32) = acc;
      }
    }
  }
  write_all((const unsigned char *)out, (long)M * NT * 128 * 4);
  sys_exit(0);
}
"""

CONV_C = RUNTIME + r"""
static unsigned char in[16 << 20] __attribute__((aligned(128)));
static int out[4 << 20] __attribute__((aligned(128)));
static HVX_Vector Bp[4 * 4096];
void _start(void) {
  read_all(in, sizeof in);
  const int *h = (const int *)in;
  int cin_p = h[0], nph = h[1], plane = h[2], ntaps = h[3], cout_p = h[4], ntiles = h[5], ka = h[6], k4 = h[7];
  const int *taps = (const int *)(in + 128);
  const signed char *X = (const signed char *)(in + 640);
  const signed char *A = X + (long)cin_p * nph * plane;
  HVX_Vector bias = Q6_V_vsplat_R(0x80808080);
  for (int t = 0; t < ntiles; t++) {
    int k = 0;
    for (int tp = 0; tp < ntaps; tp++) {
      for (int c4 = 0; c4 < cin_p / 4; c4++, k++) {
        HVX_Vector x[4];
        for (int j = 0; j < 4; j++)
          x[j] = *(const HVX_UVector *)(X + ((long)(4 * c4 + j) * nph + taps[2 * tp]) * plane + taps[2 * tp + 1] + t * 128);
        HVX_VectorPair w01 = Q6_W_vshuff_VVR(x[1], x[0], -1), w23 = Q6_W_vshuff_VVR(x[3], x[2], -1);
        HVX_VectorPair y0 = Q6_W_vshuff_VVR(Q6_V_lo_W(w23), Q6_V_lo_W(w01), -2);
        HVX_VectorPair y1 = Q6_W_vshuff_VVR(Q6_V_hi_W(w23), Q6_V_hi_W(w01), -2);
        Bp[4 * k + 0] = Q6_V_vxor_VV(Q6_V_lo_W(y0), bias);
        Bp[4 * k + 1] = Q6_V_vxor_VV(Q6_V_hi_W(y0), bias);
        Bp[4 * k + 2] = Q6_V_vxor_VV(Q6_V_lo_W(y1), bias);
        Bp[4 * k + 3] = Q6_V_vxor_VV(Q6_V_hi_W(y1), bias);
      }
    }
    for (; k < k4; k++) for (int j = 0; j < 4; j++) Bp[4 * k + j] = Q6_V_vzero();
    for (int co = 0; co < cout_p; co++) {
      int s = 0;
      for (int i = 0; i < ka; i++) s += A[(long)co * ka + i];
      const int *a = (const int *)(A + (long)co * ka);
      for (int nb = 0; nb < 4; nb++) {
        HVX_Vector acc = Q6_V_vsplat_R(-128 * s);
        for (int kk = 0; kk < k4; kk++) acc = Q6_Vw_vrmpyacc_VwVubRb(acc, Bp[4 * kk + nb], a[kk]);
        *(HVX_Vector *)(out + ((long)co * ntiles + t) * 128 + nb * 32) = acc;
      }
    }
  }
  write_all((const unsigned char *)out, (long)cout_p * ntiles * 128 * 4);
  sys_exit(0);
}
"""


@pytest.mark.parametrize("m,k,n", [(4, 8, 128), (12, 100, 300), (8, 256, 32)])
def test_gemm_kernel_matches_qemu(hexagon_toolchain, m, k, n):
    rng = np.random.default_rng(m * 1000 + k)
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    k4, ka = gemm.kgroups(k), gemm.a_row_bytes(k)
    mp, nt = rup(m, 4), -(-n // 128)
    ap = np.zeros((mp, ka), np.int8)
    ap[:m, :k] = a
    bpad = np.zeros((k, nt * 128), np.int8)
    bpad[:, :n] = b
    packs = np.concatenate([gemm.pack_b(bpad[:, j * 128:(j + 1) * 128], k4).reshape(-1) for j in range(nt)])
    hdr = np.zeros(32, np.int32)
    hdr[:4] = (mp, k4, nt, ka)
    stdin = hdr.tobytes() + ap.tobytes() + packs.tobytes()
    c_qemu = np.frombuffer(run(build(GEMM_C, "gemm"), stdin), np.int32).reshape(mp, nt * 128)[:m, :n]
    c_emu, _ = gemm.gemm_hvx(a, b)
    assert (c_qemu == c_emu).all()
    assert (c_emu == ref.gemm(a, b)).all()


@pytest.mark.parametrize("cin,h,w,cout,k,stride", [(3, 9, 9, 5, 3, 1), (8, 12, 10, 6, 3, 2), (5, 7, 7, 4, 1, 1),
                                                   (4, 16, 16, 8, 1, 2)])
def test_conv2d_kernel_matches_qemu(hexagon_toolchain, cin, h, w, cout, k, stride):
    rng = np.random.default_rng(cin * 100 + h)
    pad = k // 2
    x = rng.integers(-128, 128, (1, cin, h, w)).astype(np.int8)
    wt = rng.integers(-128, 128, (cout, cin, k, k)).astype(np.int8)
    g = Geometry(h, w, k, k, stride, pad)
    cin_p, cout_p = rup(cin, 4), rup(cout, 4)
    xi = np.zeros((1, cin_p, h, w), np.int8)
    xi[:, :cin] = x
    phases = phase_planes_ref(pad_planes(xi, g), g) if stride == 2 else None
    planes = tap_planes(xi, g, phases)[0]                       # [cin_p, nph, plane_len]
    kk = len(g.taps()) * cin_p
    ka, k4 = gemm.a_row_bytes(kk), gemm.kgroups(kk)
    a = conv.pack_weights(wt, cin_p, ka, cout_p)
    hdr = np.zeros(32, np.int32)
    hdr[:8] = (cin_p, g.nphase, g.plane_len, len(g.taps()), cout_p, g.ntiles, ka, k4)
    taps = np.zeros(128, np.int32)
    taps[:2 * len(g.taps())] = np.array(g.taps()).reshape(-1)
    stdin = hdr.tobytes() + taps.tobytes() + planes.tobytes() + a.tobytes()
    raw = np.frombuffer(run(build(CONV_C, "conv2d"), stdin), np.int32).reshape(cout_p, g.ntiles, 128)
    y_qemu = untile_outputs(raw.transpose(1, 0, 2)[:, :cout], g, 1)
    y_emu, _ = conv.conv2d_hvx(x, wt, stride, pad)
    assert (y_qemu == y_emu).all()
    assert (y_emu == ref.conv2d(x, wt, stride, pad)).all()
