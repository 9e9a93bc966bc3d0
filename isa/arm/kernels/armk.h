/* Freestanding harness for socsim's ARM kernels (docs/oracles.md section 2).
 *
 * No libc: _start reads the whole of stdin into IN, calls kernel_main(in, n, out) and writes
 * the bytes it returns to stdout, through Linux system calls (svc #0, number in x8: read = 63,
 * write = 64, exit = 93).  Each kernel file defines kernel_main and its inner loops; the
 * inner loops are separate noinline functions so that the costing step (isa/arm/armk.py) can
 * find their steady-state loop in clang's assembly. */
#ifndef ARMK_H
#define ARMK_H
#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

#define NOINLINE __attribute__((noinline))
#define ARMK_IN_MAX (1 << 20)
#define ARMK_OUT_MAX (1 << 20)

static long armk_sys3(long n, long a, long b, long c) {
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
    return x0;
}

/* kernel_main: in = stdin bytes (n of them), out = a buffer; returns the bytes written to out. */
long kernel_main(const uint8_t *in, long n, uint8_t *out);

static uint8_t armk_in[ARMK_IN_MAX] __attribute__((aligned(64)));
static uint8_t armk_out[ARMK_OUT_MAX] __attribute__((aligned(64)));

void _start(void) {
    long n = 0, r;
    while ((r = armk_sys3(63, 0, (long)(armk_in + n), ARMK_IN_MAX - n)) > 0) n += r;
    long m = kernel_main(armk_in, n, armk_out);
    long w = 0;
    while (w < m && (r = armk_sys3(64, 1, (long)(armk_out + w), m - w)) > 0) w += r;
    armk_sys3(93, m < 0 ? 1 : 0, 0, 0);
    for (;;) {}
}

/* clang may lower struct copies and zeroing to these calls even when freestanding */
void *memcpy(void *d, const void *s, size_t n) {
    uint8_t *dd = d; const uint8_t *ss = s;
    while (n--) *dd++ = *ss++;
    return d;
}
void *memset(void *d, int c, size_t n) {
    uint8_t *dd = d;
    while (n--) *dd++ = (uint8_t)c;
    return d;
}

/* The input starts with int32 header words; the arrays follow, 16-byte aligned offsets. */
static inline int32_t armk_hdr(const uint8_t *in, int i) { return ((const int32_t *)in)[i]; }
#endif
