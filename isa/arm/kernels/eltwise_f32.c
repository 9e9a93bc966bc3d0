/* Element-wise kernels of CNN training on NC4HW4 vectors (MNN's MNNReluWithSlope / binary add
 * / MNNScaleAndAddBias / the ReLU gradient).  Inner-loop unit: one 4-float output vector.
 *   relu:      1 load, 1 FMAX, 1 store
 *   add:       2 loads, 1 FADD, 1 store (residual adds, gradient accumulation)
 *   scalebias: 1 load, 1 FMLA with the channel group's scale and bias (batch norm at inference,
 *              the affine part of batch norm in training), 1 store
 *   relu_grad: 2 loads (x, dy), 1 compare, 1 AND, 1 store
 * Written here; not MNN's code. */
#include "armk.h"

NOINLINE void relu_f32(const float *x, float *y, long n) {
    float32x4_t z = vdupq_n_f32(0.f);
#pragma clang loop unroll_count(4)
    for (long i = 0; i < n; i++) vst1q_f32(y + 4 * i, vmaxq_f32(vld1q_f32(x + 4 * i), z));
}

NOINLINE void add_f32(const float *a, const float *b, float *y, long n) {
#pragma clang loop unroll_count(4)
    for (long i = 0; i < n; i++) vst1q_f32(y + 4 * i, vaddq_f32(vld1q_f32(a + 4 * i), vld1q_f32(b + 4 * i)));
}

NOINLINE void scalebias_f32(const float *x, const float *sb, float *y, long n) {
    float32x4_t s = vld1q_f32(sb), b = vld1q_f32(sb + 4);
#pragma clang loop unroll_count(4)
    for (long i = 0; i < n; i++) vst1q_f32(y + 4 * i, vfmaq_f32(b, vld1q_f32(x + 4 * i), s));
}

NOINLINE void relu_grad_f32(const float *x, const float *dy, float *dx, long n) {
    float32x4_t z = vdupq_n_f32(0.f);
#pragma clang loop unroll_count(4)
    for (long i = 0; i < n; i++) {
        uint32x4_t m = vcgtq_f32(vld1q_f32(x + 4 * i), z);
        vst1q_f32(dx + 4 * i, vreinterpretq_f32_u32(vandq_u32(m, vreinterpretq_u32_f32(vld1q_f32(dy + 4 * i)))));
    }
}

/* header: [op, n, 0, 0] (op 0 relu, 1 add, 2 scalebias, 3 relu_grad); then the input arrays of
 * n vectors each (scalebias: 8 floats of scale and bias first); out: n vectors */
long kernel_main(const uint8_t *in, long nbytes, uint8_t *out) {
    long op = armk_hdr(in, 0), n = armk_hdr(in, 1);
    const float *a = (const float *)(in + 16);
    float *y = (float *)out;
    if (16 * n > ARMK_OUT_MAX) return -1;
    switch (op) {
    case 0: if (nbytes < 16 + 16 * n) return -1; relu_f32(a, y, n); break;
    case 1: if (nbytes < 16 + 32 * n) return -1; add_f32(a, a + 4 * n, y, n); break;
    case 2: if (nbytes < 16 + 32 + 16 * n) return -1; scalebias_f32(a + 8, a, y, n); break;
    case 3: if (nbytes < 16 + 32 * n) return -1; relu_grad_f32(a, a + 4 * n, y, n); break;
    default: return -1;
    }
    return 16 * n;
}
