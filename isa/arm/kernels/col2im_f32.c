/* col2im scatter-add of the error gradient (MNN's Deconvolution / conv backward on the CPU:
 * a GEMM of the output gradient with the transposed weights gives one column per kernel tap,
 * which is then added into the input gradient, NC4HW4 layout: a pixel is a vector of 4 channels).
 * One (tap, output row) pass: dst[x * stride] += col[x] for the row's pixels.  Per unit (one
 * 4-channel vector added): 2 loads, 1 FADD, 1 store.  Written here; not MNN's code. */
#include "armk.h"

NOINLINE void col2im_row(float *restrict dst, const float *restrict col, long n, long stride) {
#pragma clang loop unroll_count(4)
    for (long x = 0; x < n; x++) {
        float32x4_t d = vld1q_f32(dst + 4 * x * stride);
        vst1q_f32(dst + 4 * x * stride, vaddq_f32(d, vld1q_f32(col + 4 * x)));
    }
}

/* header: [W, H, stride, 0]; then cols (3*3 taps, H rows, W pixels, 4 floats).  Computes the
 * input gradient of a 3x3 convolution with the given stride, unpadded: output rows
 * (H-1)*stride+3, columns (W-1)*stride+3.  out: that gradient (rows x cols x 4 floats). */
long kernel_main(const uint8_t *in, long n, uint8_t *out) {
    long W = armk_hdr(in, 0), H = armk_hdr(in, 1), s = armk_hdr(in, 2);
    const float *cols = (const float *)(in + 16);
    long OW = (W - 1) * s + 3, OH = (H - 1) * s + 3;
    if (n < 16 + 4L * 9 * H * W * 4 || 16L * OW * OH > ARMK_OUT_MAX) return -1;
    float *dst = (float *)out;
    for (long i = 0; i < OW * OH * 4; i++) dst[i] = 0.f;
    for (long ky = 0; ky < 3; ky++)
        for (long kx = 0; kx < 3; kx++)
            for (long y = 0; y < H; y++)
                col2im_row(dst + 4 * ((y * s + ky) * OW + kx), cols + 4 * (((ky * 3 + kx) * H + y) * W), W, s);
    return 16 * OW * OH;
}
