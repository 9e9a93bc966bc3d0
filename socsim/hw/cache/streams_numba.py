"""Compiled generators of the kernels' line streams (the hot part of :mod:`streams`).

``generate(kernel, P, k0, k1, budget, min_segs, out_lines, out_kinds, off)`` writes the streams of
outer-loop steps ``k0 ..`` into flat buffers, one group per (step, thread) in that order, with
``off[g] .. off[g + 1]`` the extent of group ``g``.  It stops after step ``k1 - 1``, or earlier
once ``budget`` accesses are written and at least ``min_segs`` steps are done (the sampler's
rule), and returns (accesses, steps).  When the buffers are too small it keeps counting without
writing, so the caller can size them and call again.  Consecutive touches of one line inside a
group collapse to one access (keeping the strongest kind: WRITE_FULL > WRITE > READ).

``P`` holds the kernel's geometry as int64 in the order of :data:`FIELDS` (built by the plan
constructors in :mod:`streams`).  :mod:`streams_ref` is the plain-Python twin (the original
per-segment builder), and tests/hw/test_cache_streams.py checks the two agree.
"""
from __future__ import annotations

import numba as nb
import numpy as np

CPU_CONV, CPU_PLANE, ELTWISE, DSP_CONV, DSP_PLANE = range(5)

# Kernel parameters, in the order they sit in ``P``.
FIELDS = {
    CPU_CONV: ("threads", "eb", "ob", "rowmajor", "wgrad", "C", "H", "W", "C4", "O4", "KH", "KW", "ST", "PD",
               "OH", "OW", "in_base", "w_base", "out_base", "pack_base", "pack_stride", "pack_bytes", "pixels",
               "tiles", "oc_blocks", "wblock", "tile_px", "K", "lchunk", "e_tiles", "e_rounds", "ct_base"),
    CPU_PLANE: ("threads", "dw", "wgrad", "H", "W", "C4", "KH", "KW", "ST", "PD", "OH", "row_in", "ob_row",
                "in_base", "out_base", "w_base", "planes"),
    ELTWISE: ("threads", "rd", "wr", "chunks", "rchunk", "wchunk", "out_base", "rounds", "passes"),
    DSP_CONV: ("threads", "in_vtcm", "wgrad", "C4", "H", "KH", "ST", "PD", "OH", "O", "row_in", "orow",
               "in_base", "out_base", "w_base", "w_per_oc", "rows", "per_ctx", "per_image"),
    DSP_PLANE: ("threads", "H", "W", "KH", "ST", "PD", "OH", "orow", "out_base", "planes"),
}
READ, WRITE, WRITE_FULL = 0, 1, 2
# The kinds as the kernels pass them: numpy int64 scalars, not Python ints.  numba types a
# global Python int as a literal, and ``_emit`` then compiled once per literal kind and once
# for int64 (four signatures; docs/performance.md, First run); one signature compiles once.
_READ, _WRITE, _WRITE_FULL = np.int64(READ), np.int64(WRITE), np.int64(WRITE_FULL)


@nb.njit(cache=True)
def _emit(out_l, out_k, n, g0, byte_lo, nbytes, kind, line):
    """Append the lines of one byte run; collapse a repeat of the group's previous line.

    A function of its own, not inlined into its ~20 call sites: that halved the first run's
    compile of ``generate`` (docs/performance.md, First run) at no measurable cost in
    generation speed (the loop over a run's lines is the work, not the call)."""
    if nbytes <= 0:
        return n
    lo = byte_lo // line
    hi = (byte_lo + nbytes - 1) // line + 1
    cap = out_l.shape[0]
    if n > cap:
        # past the buffer only counting: the loop below would neither compare (n - 1 >= cap) nor
        # write, one count per line; so the count in one step (the sizing pass of an FC step's
        # ~12 M accesses cost as much as writing them)
        return n + (hi - lo)
    for x in range(lo, hi):
        if n > g0 and n - 1 < cap and out_l[n - 1] == x:
            if kind > out_k[n - 1]:
                out_k[n - 1] = kind
            continue
        if n < cap:
            out_l[n] = x
            out_k[n] = kind
        n += 1
    return n


@nb.njit(cache=True, inline="always")
def _emit_read(out_l, out_k, n, g0, byte_lo, nbytes, line):
    """:func:`_emit` of a READ run, with its commonest case inline: a run inside the line the
    group wrote last collapses into it (a READ never raises the kind), no call and no division
    (a 64-bit division costs tens of cycles; the test multiplies)."""
    if nbytes > 0 and n > g0 and n - 1 < out_l.shape[0]:
        x0 = out_l[n - 1] * line
        if x0 <= byte_lo and byte_lo + nbytes <= x0 + line:
            return n
    return _emit(out_l, out_k, n, g0, byte_lo, nbytes, _READ, line)


@nb.njit(cache=True)
def _cpu_conv_tile(P, t, pack_at, j0, jstep, out_l, out_k, n, g0, line):
    """Forward / transposed conv / GEMM: pixel tile ``t`` against output-channel blocks j0.."""
    eb, ob, rowmajor = P[1], P[2], P[3]
    C, H, W, C4, O4, KH, KW, ST, PD, OH, OW = P[5], P[6], P[7], P[8], P[9], P[10], P[11], P[12], P[13], P[14], P[15]
    in_base, w_base, out_base = P[16], P[17], P[18]
    pack_bytes, pixels, oc_blocks, wblock, tile_px = P[21], P[22], P[24], P[25], P[26]
    px0 = t * tile_px
    npx = min(tile_px, pixels - px0)
    b = px0 // (OH * OW)
    rem = px0 % (OH * OW)
    oh = rem // OW
    ow0 = rem % OW
    ow1 = min(OW, ow0 + npx)
    if rowmajor:
        n = _emit(out_l, out_k, n, g0, in_base + px0 * C * eb, npx * C * eb, _READ, line)
    else:
        iw_lo = max(0, ow0 * ST - PD)
        iw_hi = min(W, (ow1 - 1) * ST - PD + KW)
        if iw_hi > iw_lo:
            for c4 in range(C4):
                for r in range(KH):
                    ih = oh * ST - PD + r
                    if 0 <= ih < H:
                        n = _emit(out_l, out_k, n, g0, in_base + (((b * C4 + c4) * H + ih) * W + iw_lo) * 4 * eb,
                                  (iw_hi - iw_lo) * 4 * eb, _READ, line)
    n = _emit(out_l, out_k, n, g0, pack_at, pack_bytes, _WRITE_FULL, line)
    for j in range(j0, oc_blocks, jstep):
        n = _emit(out_l, out_k, n, g0, pack_at, pack_bytes, _READ, line)
        n = _emit(out_l, out_k, n, g0, w_base + j * wblock, wblock, _READ, line)
    for o4 in range(O4):
        n = _emit(out_l, out_k, n, g0, out_base + (((b * O4 + o4) * OH + oh) * OW + ow0) * 4 * ob,
                  (ow1 - ow0) * 4 * ob, _WRITE_FULL, line)
    return n


@nb.njit(cache=True)
def _cpu_wgrad_step(P, k, t, pack_at, out_l, out_k, n, g0, line):
    """Thread ``t``'s part of step ``k`` of the weight gradient as MNN's CPUMatMul runs it
    (streams.cpu_conv_plan, weight gradient): dW[K, O] = im2col(X)[K, l] . dY[O, l]^T with the
    reduction l = batch x pixels blocked into chunks of ``lchunk``; step k is chunk
    k // e_rounds, round k % e_rounds of 12-row tiles of dW dealt round-robin to the threads."""
    threads, eb = P[0], P[1]
    H, W, C4, O4, KH, KW, ST, PD, OH, OW = P[6], P[7], P[8], P[9], P[10], P[11], P[12], P[13], P[14], P[15]
    in_base, w_base, out_base = P[16], P[17], P[18]
    pixels, oc_blocks, tile_px = P[22], P[24], P[26]
    K, lchunk, e_tiles, e_rounds, ct_base = P[27], P[28], P[29], P[30], P[31]
    ch = k // e_rounds
    i = (k % e_rounds) * threads + t
    if i >= e_tiles:
        return n
    p0 = ch * lchunk
    p1 = min(pixels, p0 + lchunk)
    r0 = i * tile_px
    r1 = min(K, r0 + tile_px)
    khw = KH * KW
    plane = OH * OW
    # pack the tile's im2col rows over the chunk: each (4-channel group, kernel row) the rows
    # touch reads that input row under every output row of the chunk (NC4HW4: one run serves
    # the group's 4 channels)
    c_lo = r0 // khw
    c_hi = (r1 - 1) // khw
    for c4 in range(c_lo // 4, c_hi // 4 + 1):
        for r in range(KH):
            used = False
            for c in range(max(c4 * 4, c_lo), min(c4 * 4 + 3, c_hi) + 1):
                a = c * khw + r * KW
                if a < r1 and a + KW > r0:
                    used = True
            if not used:
                continue
            p = p0
            while p < p1:
                b = p // plane
                rem = p % plane
                oh = rem // OW
                ow0 = rem % OW
                ow1 = min(OW, ow0 + (p1 - p))
                ih = oh * ST - PD + r
                iw_lo = max(0, ow0 * ST - PD)
                iw_hi = min(W, (ow1 - 1) * ST - PD + KW)
                if 0 <= ih < H and iw_hi > iw_lo:
                    n = _emit(out_l, out_k, n, g0, in_base + (((b * C4 + c4) * H + ih) * W + iw_lo) * 4 * eb,
                              (iw_hi - iw_lo) * 4 * eb, _READ, line)
                p += ow1 - ow0
    pack_bytes = (p1 - p0) * tile_px * eb
    n = _emit(out_l, out_k, n, g0, pack_at, pack_bytes, _WRITE_FULL, line)
    # the packed GEMM: per 8-column block of dW, the packed tile and dY's block over the chunk;
    # the 12x8 accumulator stays in registers over the whole chunk, written once
    # one chunk: the product goes straight to dW; several: each chunk's goes to the partial
    # buffer and is added into dW (MNN writes the first chunk's straight to dW: counted like the
    # others, so that every step of a multi-chunk op is alike for the sampler; 1/chunks of the
    # add traffic too much)
    dst = w_base if pixels <= lchunk else ct_base
    for j in range(oc_blocks):
        n = _emit(out_l, out_k, n, g0, pack_at, pack_bytes, _READ, line)
        for o4 in range(2 * j, min(2 * j + 2, O4)):
            p = p0
            while p < p1:
                b = p // plane
                q = p % plane
                m = min(plane - q, p1 - p)
                n = _emit(out_l, out_k, n, g0, out_base + ((b * O4 + o4) * plane + q) * 4 * eb, m * 4 * eb,
                          _READ, line)
                p += m
        for o4 in range(2 * j, min(2 * j + 2, O4)):
            n = _emit(out_l, out_k, n, g0, dst + (o4 * K + r0) * 16, (r1 - r0) * 16, _WRITE_FULL, line)
    if pixels > lchunk:   # dW += the chunk's partial product (MNNMatrixAdd over dW's rows)
        for o4 in range(O4):
            n = _emit(out_l, out_k, n, g0, w_base + (o4 * K + r0) * 16, (r1 - r0) * 16, _READ, line)
            n = _emit(out_l, out_k, n, g0, ct_base + (o4 * K + r0) * 16, (r1 - r0) * 16, _READ, line)
            n = _emit(out_l, out_k, n, g0, w_base + (o4 * K + r0) * 16, (r1 - r0) * 16, _WRITE, line)
    return n


@nb.njit(cache=True)
def _group_cpu(kernel, P, k, t, out_l, out_k, n, line):
    """Stream of thread ``t`` in outer-loop step ``k`` of a CPU kernel (CPU_CONV, CPU_PLANE,
    ELTWISE), appended at ``n``."""
    g0 = n
    threads = P[0]
    if kernel == CPU_CONV:
        pack_at = P[19] + t * P[20]
        if P[4]:   # weight gradient: chunk-blocked GEMM over dW's row tiles
            n = _cpu_wgrad_step(P, k, t, pack_at, out_l, out_k, n, g0, line)
        else:
            tile = k * threads + t
            if tile < P[23]:
                n = _cpu_conv_tile(P, tile, pack_at, np.int64(0), np.int64(1), out_l, out_k, n, g0, line)
    elif kernel == CPU_PLANE:
        dw, wgrad, H, _W, C4, KH, KW, ST, PD, OH = P[1], P[2], P[3], P[4], P[5], P[6], P[7], P[8], P[9], P[10]
        row_in, ob_row, in_base, out_base, w_base, planes = P[11], P[12], P[13], P[14], P[15], P[16]
        pl = k * threads + t
        if pl < planes:
            ibase = in_base + pl * H * row_in
            obase = out_base + pl * OH * ob_row
            if dw:
                n = _emit(out_l, out_k, n, g0, w_base + (pl % C4) * KH * KW * 16, KH * KW * 16, _READ, line)
            okind = _READ if wgrad else _WRITE_FULL
            for oh in range(OH):
                for r in range(KH):
                    ih = oh * ST - PD + r
                    if 0 <= ih < H:
                        n = _emit(out_l, out_k, n, g0, ibase + ih * row_in, row_in, _READ, line)
                n = _emit(out_l, out_k, n, g0, obase + oh * ob_row, ob_row, okind, line)
    elif kernel == ELTWISE:
        rd, wr, chunks, rchunk, wchunk, out_base, rounds = P[1], P[2], P[3], P[4], P[5], P[6], P[7]
        passes = P[8]
        last = k // rounds == passes - 1
        c = (k % rounds) * threads + t
        if c < chunks:
            n = _emit(out_l, out_k, n, g0, c * rchunk, min(rchunk, rd - c * rchunk), _READ, line)
            if last:
                n = _emit(out_l, out_k, n, g0, out_base + c * wchunk, min(wchunk, wr - c * wchunk), _WRITE_FULL, line)
    return n


@nb.njit(cache=True, inline="always")
def _dsp_conv_inputs(P, b, oh, out_l, out_k, n, g0, line):
    """The input rows that output row ``oh`` of image ``b`` reads (every input channel group's
    window rows), appended at ``n``: the same for every output channel."""
    C4, H, KH, ST, PD, row_in, in_base = P[3], P[4], P[5], P[6], P[7], P[10], P[12]
    # the input rows of one output row, read in order: rows that follow each other in memory (a
    # group's kh rows; every group's when the window covers all H rows) are one run [lo, hi).
    # The same lines as a run per row: _emit collapses the line two touching runs share, so one
    # emit of the union is the same stream (a small-row layer's ~20 emits per line became one;
    # docs/performance.md, Cold planning)
    lo = np.int64(-1)
    hi = np.int64(-1)
    for ci4 in range(C4):
        for kh in range(KH):
            ih = oh * ST - PD + kh
            if 0 <= ih < H:
                a = in_base + ((b * C4 + ci4) * H + ih) * row_in
                if a == hi:
                    hi += row_in
                else:
                    n = _emit_read(out_l, out_k, n, g0, lo, hi - lo, line)
                    lo = a
                    hi = a + row_in
    return _emit_read(out_l, out_k, n, g0, lo, hi - lo, line)


@nb.njit(cache=True)
def _drive_dsp_conv(P, line, k0, k1, budget, min_segs, out_l, out_k, off):
    """:func:`_drive` for DSP_CONV: step ``k`` is output channel ``k`` over the whole batch (or,
    one image at a time, channel ``k % O`` of image ``k // O``); each thread's rows, per row its
    input rows then its output row.

    A row's input part does not depend on the output channel, so a thread's next step over the
    same rows copies it from the thread's previous group (where it was written whole) instead
    of walking every (channel group, kernel row) again: the input region shares no line with the
    weights or the outputs (the plan lays them out page-aligned, one after the other), so no
    access around it collapses into it or it into them, and the copy is the stream the walk
    writes.  Past the buffer (the sizing pass) the walk runs as before."""
    threads = P[0]
    in_vtcm, wgrad, OH, O = P[1], P[2], P[8], P[9]
    orow, out_base, w_base, w_per_oc, rows, per_ctx, per_image = P[11], P[13], P[14], P[15], P[16], P[17], P[18]
    cap = out_l.shape[0]
    okind = _READ if wgrad else _WRITE_FULL
    beg = np.zeros((threads, max(per_ctx, 1)), dtype=np.int64)   # row i's input part in thread t's
    end = np.zeros((threads, max(per_ctx, 1)), dtype=np.int64)   # last group: out_l[beg:end]
    img_of = np.full(threads, -1, dtype=np.int64)                 # the rows' image (-1: none yet)
    n = np.int64(0)
    g = 0
    k = k0
    while k < k1:
        if per_image:                   # step k: image k // O, output channel k % O
            oc = k % O
            img = k // O
            r0 = img * OH
            r1 = r0 + OH
        else:                           # step k: output channel k over the whole batch
            oc = k
            img = 0
            r0 = 0
            r1 = rows
        for t in range(threads):
            off[g] = n
            g0 = n
            if not in_vtcm:
                n = _emit(out_l, out_k, n, g0, w_base + oc * w_per_oc, w_per_oc, _READ, line)
            same = img_of[t] == img
            i = 0
            for r in range(r0 + t * per_ctx, min(r1, r0 + (t + 1) * per_ctx)):
                b = r // OH
                oh = r % OH
                s = n
                ln = end[t, i] - beg[t, i]
                if same and end[t, i] <= cap and n + ln <= cap:
                    src = beg[t, i]
                    for j in range(ln):
                        out_l[n + j] = out_l[src + j]
                        out_k[n + j] = out_k[src + j]
                    n += ln
                else:
                    n = _dsp_conv_inputs(P, b, oh, out_l, out_k, n, g0, line)
                beg[t, i] = s
                end[t, i] = n
                n = _emit(out_l, out_k, n, g0, out_base + ((b * O + oc) * OH + oh) * orow, orow, okind, line)
                i += 1
            img_of[t] = img
            g += 1
        k += 1
        if n >= budget and k - k0 >= min_segs:
            break
    off[g] = n
    return n, k - k0


@nb.njit(cache=True)
def _group_dsp(kernel, P, k, t, out_l, out_k, n, line):
    """Stream of thread ``t`` in outer-loop step ``k`` of DSP_PLANE, appended at ``n`` (DSP_CONV has
    a driver of its own, :func:`_drive_dsp_conv`)."""
    g0 = n
    threads = P[0]
    H, W, KH, ST, PD, OH, orow, out_base, planes = P[1], P[2], P[3], P[4], P[5], P[6], P[7], P[8], P[9]
    pl = k * threads + t
    if pl < planes:
        ibase = pl * H * W
        for oh in range(OH):
            for r in range(KH):
                ih = oh * ST - PD + r
                if 0 <= ih < H:
                    n = _emit(out_l, out_k, n, g0, ibase + ih * W, W, _READ, line)
            n = _emit(out_l, out_k, n, g0, out_base + (pl * OH + oh) * orow, orow, _WRITE_FULL, line)
    return n


@nb.njit(cache=True, inline="always")
def _drive(group, kernel, P, line, k0, k1, budget, min_segs, out_l, out_k, off):
    """The steps' loop of both generators (inlined into each), ``group`` the stream of one thread
    in one step."""
    threads = P[0]
    # np.int64, not a literal 0: a literal would compile the group (and _cpu_conv_tile under it)
    # once more for a Literal[int](0) signature, doubling the first run's compile time
    n = np.int64(0)
    g = 0
    k = k0
    while k < k1:
        for t in range(threads):
            off[g] = n
            n = group(kernel, P, k, t, out_l, out_k, n, line)
            g += 1
        k += 1
        if n >= budget and k - k0 >= min_segs:
            break
    off[g] = n
    return n, k - k0


@nb.njit(cache=True)
def _generate_cpu(kernel, P, line, k0, k1, budget, min_segs, out_l, out_k, off):
    return _drive(_group_cpu, kernel, P, line, k0, k1, budget, min_segs, out_l, out_k, off)


@nb.njit(cache=True)
def _generate_dsp(kernel, P, line, k0, k1, budget, min_segs, out_l, out_k, off):
    if kernel == DSP_CONV:
        return _drive_dsp_conv(P, line, k0, k1, budget, min_segs, out_l, out_k, off)
    return _drive(_group_dsp, kernel, P, line, k0, k1, budget, min_segs, out_l, out_k, off)


def generate(kernel: int, P: np.ndarray, line: int, k0: int, k1: int, budget: int, min_segs: int,
             out_l: np.ndarray, out_k: np.ndarray, off: np.ndarray) -> tuple[int, int]:
    """Streams of steps k0.. (see the module docstring); returns (accesses, steps done).

    Two compiled generators, the CPU's kernels and the HVX's: numba compiles every branch of a
    function it compiles, so a CPU-only run (the quick-start) then compiles no DSP kernel
    (docs/performance.md, First run)."""
    gen = _generate_dsp if kernel in (DSP_CONV, DSP_PLANE) else _generate_cpu
    return gen(kernel, P, line, k0, k1, budget, min_segs, out_l, out_k, off)
