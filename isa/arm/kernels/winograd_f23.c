/* Winograd F(2x2, 3x3) transforms (Lavin & Gray, CVPR 2016) on NC4HW4 vectors, the form MNN's
 * ConvolutionWinograd runs for 3x3 stride-1 convolutions with constant weights (inference;
 * ConvolutionFloatFactory picks it when bestWinogradUnit > 1): input tiles go through B^T d B
 * into 16 planes, a batched GEMM (the 12x8 tile) multiplies each plane by the transformed
 * weights, and A^T m A gives each 2x2 output tile.
 *   source transform, per 4x4 tile: 16 loads, 32 FADD/FSUB, 16 stores (unit: one tile)
 *   dest transform, per tile: 16 loads, 24 FADD/FSUB, 4 stores (unit: one tile)
 * B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], A^T = [1 1 1 0; 0 1 -1 -1].
 * Written here; not MNN's code. */
#include "armk.h"

/* src: tiles at 2-pixel steps along a row of width W (vectors); dst: plane p (0..15) of tile t
 * at dst[4 * (p * ntiles + t)] */
NOINLINE void wino23_src(const float *src, float *dst, long ntiles, long W) {
#pragma clang loop unroll(disable) /* 78 instructions a tile already */
    for (long t = 0; t < ntiles; t++) {
        const float *s = src + 8 * t;
        float32x4_t d[4][4], m[4][4];
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++) d[r][c] = vld1q_f32(s + 4 * (r * W + c));
        for (int c = 0; c < 4; c++) {
            m[0][c] = vsubq_f32(d[0][c], d[2][c]);
            m[1][c] = vaddq_f32(d[1][c], d[2][c]);
            m[2][c] = vsubq_f32(d[2][c], d[1][c]);
            m[3][c] = vsubq_f32(d[1][c], d[3][c]);
        }
        for (int r = 0; r < 4; r++) {
            float32x4_t o0 = vsubq_f32(m[r][0], m[r][2]), o1 = vaddq_f32(m[r][1], m[r][2]);
            float32x4_t o2 = vsubq_f32(m[r][2], m[r][1]), o3 = vsubq_f32(m[r][1], m[r][3]);
            vst1q_f32(dst + 4 * ((r * 4 + 0) * ntiles + t), o0);
            vst1q_f32(dst + 4 * ((r * 4 + 1) * ntiles + t), o1);
            vst1q_f32(dst + 4 * ((r * 4 + 2) * ntiles + t), o2);
            vst1q_f32(dst + 4 * ((r * 4 + 3) * ntiles + t), o3);
        }
    }
}

/* src: the 16 planes as produced by the GEMMs; dst: 2x2 output tiles along a row of width 2*ntiles */
NOINLINE void wino23_dst(const float *src, float *dst, long ntiles) {
#pragma clang loop unroll(disable) /* 78 instructions a tile already */
    for (long t = 0; t < ntiles; t++) {
        float32x4_t m[4][4], u[2][4];
        for (int p = 0; p < 16; p++) m[p / 4][p % 4] = vld1q_f32(src + 4 * (p * ntiles + t));
        for (int c = 0; c < 4; c++) {
            u[0][c] = vaddq_f32(vaddq_f32(m[0][c], m[1][c]), m[2][c]);
            u[1][c] = vsubq_f32(vsubq_f32(m[1][c], m[2][c]), m[3][c]);
        }
        for (int r = 0; r < 2; r++) {
            vst1q_f32(dst + 4 * (r * 2 * ntiles + 2 * t), vaddq_f32(vaddq_f32(u[r][0], u[r][1]), u[r][2]));
            vst1q_f32(dst + 4 * (r * 2 * ntiles + 2 * t + 1), vsubq_f32(vsubq_f32(u[r][1], u[r][2]), u[r][3]));
        }
    }
}

/* header: [op, ntiles, 0, 0]; op 0: input 4 rows x (2*ntiles+2) vectors -> 16 planes x ntiles;
 * op 1: 16 planes x ntiles -> 2 rows x 2*ntiles vectors */
long kernel_main(const uint8_t *in, long n, uint8_t *out) {
    long op = armk_hdr(in, 0), nt = armk_hdr(in, 1);
    const float *s = (const float *)(in + 16);
    if (256 * nt > ARMK_OUT_MAX) return -1;
    if (op == 0) {
        long W = 2 * nt + 2;
        if (n < 16 + 64 * W) return -1;
        wino23_src(s, (float *)out, nt, W);
        return 256 * nt;
    }
    if (op == 1) {
        if (n < 16 + 256 * nt) return -1;
        wino23_dst(s, (float *)out, nt);
        return 64 * nt;
    }
    return -1;
}
