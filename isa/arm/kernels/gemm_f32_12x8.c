/* FP32 GEMM micro-kernel on MNN's arm64 tile: 12 columns of the packed A panel (eP = 12) by
 * 8 of the packed B panel (hP = 8), one k at a time (lP = 1); MNNGetMatMulPackMode in
 * alibaba/MNN source/backend/cpu/arm/CommonOptFunctionNeon.cpp.  Per k step: 3 + 2 128-bit
 * loads, 24 FMLA by element into 24 accumulators.  Written here from that tile shape; not MNN's code.
 *
 * The same tile runs every GEMM of FP32 training in MNN: the forward convolution (im2col + GEMM,
 * ConvolutionTiledExecutor), the error gradient (a GEMM against the transposed weights, then
 * col2im) and the weight gradient (im2col + GEMM reducing over the batch's pixels).
 * Inner-loop unit: one FMLA (4 MACs). */
#include "armk.h"

/* A: K x 12 (packed), B: K x 8 (packed), C: 12 x 8 row-major, C = A^T B. */
NOINLINE void gemm_f32_12x8(const float *A, const float *B, float *C, long K) {
    float32x4_t c[12][2];
    for (int i = 0; i < 12; i++) c[i][0] = c[i][1] = vdupq_n_f32(0.f);
#pragma clang loop unroll(disable) /* 24 FMLA a step already */
    for (long k = 0; k < K; k++) {
        float32x4_t a0 = vld1q_f32(A), a1 = vld1q_f32(A + 4), a2 = vld1q_f32(A + 8);
        float32x4_t b0 = vld1q_f32(B), b1 = vld1q_f32(B + 4);
        A += 12; B += 8;
#define ROW(i, a, l) c[i][0] = vfmaq_laneq_f32(c[i][0], b0, a, l); c[i][1] = vfmaq_laneq_f32(c[i][1], b1, a, l);
        ROW(0, a0, 0) ROW(1, a0, 1) ROW(2, a0, 2) ROW(3, a0, 3)
        ROW(4, a1, 0) ROW(5, a1, 1) ROW(6, a1, 2) ROW(7, a1, 3)
        ROW(8, a2, 0) ROW(9, a2, 1) ROW(10, a2, 2) ROW(11, a2, 3)
#undef ROW
    }
    for (int i = 0; i < 12; i++) { vst1q_f32(C + 8 * i, c[i][0]); vst1q_f32(C + 8 * i + 4, c[i][1]); }
}

/* header: [K, 0, 0, 0]; then A (K*12 floats), B (K*8 floats); out: C (96 floats) */
long kernel_main(const uint8_t *in, long n, uint8_t *out) {
    long K = armk_hdr(in, 0);
    const float *A = (const float *)(in + 16);
    const float *B = A + 12 * K;
    if (n < 16 + (long)sizeof(float) * 20 * K) return -1;
    gemm_f32_12x8(A, B, (float *)out, K);
    return 96 * sizeof(float);
}
