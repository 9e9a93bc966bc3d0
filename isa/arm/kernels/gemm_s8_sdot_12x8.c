/* INT8 GEMM micro-kernel with SDOT (ARMv8.2 dot product, vdotq_laneq_s32): 12 columns of the A
 * panel by 8 of the B panel, 4-deep k steps (each SDOT lane sums 4 int8 products), int32
 * accumulators.  MNN's ARMv8.2 int8 path (MNNGemmInt8AddBiasScale_ARMV82_Unit, alibaba/MNN
 * source/backend/cpu/arm/arm64/) packs 4-deep source units the same way; the 12x8 tile here
 * matches the FP32 tile (assumption: MNN's int8 tile width differs by version).  Per 4-deep k
 * step: 3 + 2 128-bit loads, 24 SDOT.  Inner-loop unit: one SDOT (16 MACs).  Not MNN's code. */
#include "armk.h"

/* A: K4 x 12 x 4 int8, B: K4 x 8 x 4 int8, C: 12 x 8 int32 row-major, C[i][j] = sum_k A[k][i] B[k][j]. */
NOINLINE void gemm_s8_sdot_12x8(const int8_t *A, const int8_t *B, int32_t *C, long K4) {
    int32x4_t c[12][2];
    for (int i = 0; i < 12; i++) c[i][0] = c[i][1] = vdupq_n_s32(0);
#pragma clang loop unroll(disable) /* 24 SDOT a step already */
    for (long k = 0; k < K4; k++) {
        int8x16_t a0 = vld1q_s8(A), a1 = vld1q_s8(A + 16), a2 = vld1q_s8(A + 32);
        int8x16_t b0 = vld1q_s8(B), b1 = vld1q_s8(B + 16);
        A += 48; B += 32;
#define ROW(i, a, l) c[i][0] = vdotq_laneq_s32(c[i][0], b0, a, l); c[i][1] = vdotq_laneq_s32(c[i][1], b1, a, l);
        ROW(0, a0, 0) ROW(1, a0, 1) ROW(2, a0, 2) ROW(3, a0, 3)
        ROW(4, a1, 0) ROW(5, a1, 1) ROW(6, a1, 2) ROW(7, a1, 3)
        ROW(8, a2, 0) ROW(9, a2, 1) ROW(10, a2, 2) ROW(11, a2, 3)
#undef ROW
    }
    for (int i = 0; i < 12; i++) { vst1q_s32(C + 8 * i, c[i][0]); vst1q_s32(C + 8 * i + 4, c[i][1]); }
}

/* header: [K4, 0, 0, 0]; then A (K4*48 bytes), B (K4*32 bytes); out: C (96 int32) */
long kernel_main(const uint8_t *in, long n, uint8_t *out) {
    long K4 = armk_hdr(in, 0);
    const int8_t *A = (const int8_t *)(in + 16);
    const int8_t *B = A + 48 * K4;
    if (n < 16 + 80 * K4) return -1;
    gemm_s8_sdot_12x8(A, B, (int32_t *)out, K4);
    return 96 * sizeof(int32_t);
}
