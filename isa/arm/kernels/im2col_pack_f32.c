/* im2col + pack into the GEMM's A panel (MNN's ConvolutionTiledExecutor and the weight-gradient
 * path: pixels of an NC4HW4 tensor, a vector of 4 channels each, go to the (e/12, l, 12) packed
 * layout of MNNPackC4ForMatMul_A, k-major, so every 4 pixels x 4 channels block is transposed).
 * Per block: 4 loads, a 4x4 transpose (TRN1/TRN2 of 32- and 64-bit lanes), 4 stores at the
 * panel's stride of 12.  Inner-loop unit: one 4-float vector packed.  Written here; not MNN's code. */
#include "armk.h"

/* src: n4 blocks of 4 pixels x 4 channels (pixel-major); dst: panel rows of 12 floats, block b
 * going to columns 4*(b%3) .. of row group b/3 (channel c of pixel p -> dst[(b/3)*48 + c*12 + 4*(b%3) + p]). */
NOINLINE void im2col_pack(const float *src, float *dst, long n4) {
#pragma clang loop unroll_count(4)
    for (long b = 0; b < n4; b++) {
        float32x4_t p0 = vld1q_f32(src), p1 = vld1q_f32(src + 4), p2 = vld1q_f32(src + 8), p3 = vld1q_f32(src + 12);
        src += 16;
        float32x4_t t0 = vtrn1q_f32(p0, p1), t1 = vtrn2q_f32(p0, p1), t2 = vtrn1q_f32(p2, p3), t3 = vtrn2q_f32(p2, p3);
        float64x2_t u0 = vreinterpretq_f64_f32(t0), u1 = vreinterpretq_f64_f32(t1);
        float64x2_t u2 = vreinterpretq_f64_f32(t2), u3 = vreinterpretq_f64_f32(t3);
        float *d = dst + (b / 3) * 48 + 4 * (b % 3);
        vst1q_f32(d, vreinterpretq_f32_f64(vtrn1q_f64(u0, u2)));
        vst1q_f32(d + 12, vreinterpretq_f32_f64(vtrn1q_f64(u1, u3)));
        vst1q_f32(d + 24, vreinterpretq_f32_f64(vtrn2q_f64(u0, u2)));
        vst1q_f32(d + 36, vreinterpretq_f32_f64(vtrn2q_f64(u1, u3)));
    }
}

/* header: [n4, 0, 0, 0] (n4 a multiple of 3); then src (n4*16 floats); out: dst (n4*16 floats) */
long kernel_main(const uint8_t *in, long n, uint8_t *out) {
    long n4 = armk_hdr(in, 0);
    if (n4 % 3 || n < 16 + 64 * n4 || 64 * n4 > ARMK_OUT_MAX) return -1;
    im2col_pack((const float *)(in + 16), (float *)out, n4);
    return 64 * n4;
}
