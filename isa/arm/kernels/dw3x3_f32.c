/* Depthwise 3x3 convolution, stride 1, on NC4HW4 (a pixel is a vector of 4 channels, so every
 * tap is one FMLA of a whole vector with that channel group's weight vector; MNN's
 * ConvolutionDepthwise3x3 / MNNConvDwF23 families work on this layout).  One output row: per
 * output vector 9 loads (3 rows x 3 taps), 9 FMLA, 1 store.  Inner-loop unit: one output vector.
 * Written here; not MNN's code. */
#include "armk.h"

NOINLINE void dw3x3_row(const float *restrict r0, const float *restrict r1, const float *restrict r2,
                        const float *restrict w, float *restrict dst, long n) {
    float32x4_t w0 = vld1q_f32(w), w1 = vld1q_f32(w + 4), w2 = vld1q_f32(w + 8);
    float32x4_t w3 = vld1q_f32(w + 12), w4 = vld1q_f32(w + 16), w5 = vld1q_f32(w + 20);
    float32x4_t w6 = vld1q_f32(w + 24), w7 = vld1q_f32(w + 28), w8 = vld1q_f32(w + 32);
#pragma clang loop unroll_count(4)
    for (long x = 0; x < n; x++) {
        float32x4_t a = vmulq_f32(vld1q_f32(r0), w0);
        a = vfmaq_f32(a, vld1q_f32(r0 + 4), w1);
        a = vfmaq_f32(a, vld1q_f32(r0 + 8), w2);
        a = vfmaq_f32(a, vld1q_f32(r1), w3);
        a = vfmaq_f32(a, vld1q_f32(r1 + 4), w4);
        a = vfmaq_f32(a, vld1q_f32(r1 + 8), w5);
        a = vfmaq_f32(a, vld1q_f32(r2), w6);
        a = vfmaq_f32(a, vld1q_f32(r2 + 4), w7);
        a = vfmaq_f32(a, vld1q_f32(r2 + 8), w8);
        vst1q_f32(dst, a);
        r0 += 4; r1 += 4; r2 += 4; dst += 4;
    }
}

/* header: [W, H, 0, 0]; then weights (9 taps x 4 floats), input (H x W x 4 floats); out: the
 * valid output ((H-2) x (W-2) x 4 floats) */
long kernel_main(const uint8_t *in, long n, uint8_t *out) {
    long W = armk_hdr(in, 0), H = armk_hdr(in, 1);
    const float *w = (const float *)(in + 16), *x = w + 36;
    if (W < 3 || H < 3 || n < 16 + 4 * (36 + 4 * W * H)) return -1;
    float *y = (float *)out;
    for (long r = 0; r < H - 2; r++)
        dw3x3_row(x + 4 * W * r, x + 4 * W * (r + 1), x + 4 * W * (r + 2), w, y + 4 * (W - 2) * r, W - 2);
    return 16 * (W - 2) * (H - 2);
}
