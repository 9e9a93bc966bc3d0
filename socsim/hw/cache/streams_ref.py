"""Plain-numpy reference twin of the kernels' line streams (:mod:`streams` + :mod:`streams_numba`).

The original per-segment builder: each ``segment(k)`` assembles the streams from numpy runs in
Python.  Kept as the executable specification of the loop orders described in
:mod:`socsim.hw.cache.streams`; tests/hw/test_cache_streams.py checks that the compiled
generators give identical streams.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from socsim.hw.cache.geometry import READ, WRITE, WRITE_FULL
from socsim.hw.cache.streams import (CPU_TILE_OC, CPU_TILE_PIXELS, ELTWISE_CHUNK_BYTES, _align,
                                     _elt, _out_elt, _plane_shape, gemm_like_shape, wgrad_lchunk)
from socsim.workload.opkinds import lookup

Streams = list[tuple[np.ndarray, np.ndarray]]


@dataclass
class StreamPlan:
    """A kernel's steps as Python closures (the reference form of :class:`streams.StreamPlan`)."""

    line_bytes: int
    n_segments: int
    segment: Callable[[int], Streams]
    footprint_bytes: int
    scratch: tuple[tuple[int, int], ...] = ()
    scratch_bytes_per_segment: int = 0
    notes: dict = field(default_factory=dict)


class _Builder:
    """Collects byte runs into a line stream."""

    def __init__(self, line: int) -> None:
        self.line = line
        self.parts: list[np.ndarray] = []
        self.kinds: list[np.ndarray] = []

    def run(self, byte_lo: int, nbytes: int, kind: int = READ) -> None:
        if nbytes <= 0:
            return
        lo = byte_lo // self.line
        hi = (byte_lo + nbytes - 1) // self.line + 1
        self.parts.append(np.arange(lo, hi, dtype=np.int64))
        self.kinds.append(np.full(hi - lo, kind, dtype=np.uint8))

    def runs(self, starts: np.ndarray, nbytes, kind=READ) -> None:
        """Many runs in order (vectorised); ``nbytes`` and ``kind`` scalar or per run."""
        starts = np.asarray(starts, dtype=np.int64).ravel()
        if starts.size == 0:
            return
        nb = np.asarray(nbytes, dtype=np.int64).ravel()
        nb = np.broadcast_to(nb, starts.shape) if nb.size == 1 else nb
        kd = np.asarray(kind, dtype=np.uint8).ravel()
        kd = np.broadcast_to(kd, starts.shape) if kd.size == 1 else kd
        ok = nb > 0
        starts, nb, kd = starts[ok], nb[ok], kd[ok]
        if starts.size == 0:
            return
        lo = starts // self.line
        cnt = (starts + nb - 1) // self.line + 1 - lo
        total = int(cnt.sum())
        first = np.cumsum(cnt) - cnt
        flat = np.repeat(lo - first, cnt) + np.arange(total, dtype=np.int64)
        self.parts.append(flat)
        self.kinds.append(np.repeat(kd, cnt))

    def build(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.parts:
            return np.empty(0, np.int64), np.empty(0, np.uint8)
        lines = np.concatenate(self.parts)
        kinds = np.concatenate(self.kinds)
        # collapse immediate repeats of the same line (first-level hits; keep the write if any)
        if lines.size > 1:
            keep = np.ones(lines.size, dtype=bool)
            keep[1:] = lines[1:] != lines[:-1]
            if not keep.all():
                idx = np.cumsum(keep) - 1
                merged = np.zeros(int(keep.sum()), dtype=np.uint8)
                np.maximum.at(merged, idx, kinds)
                return lines[keep], merged
        return lines, kinds


# ----------------------------------------------------------------------------- CPU kernels

def cpu_conv_plan(op, threads: int, line: int = 64) -> StreamPlan:
    """MNN-style im2col + packed GEMM (forward, transposed, GEMM); the weight gradient as MNN's
    chunk-blocked MatMul (:func:`_cpu_wgrad_plan`)."""
    eb, ob = _elt(op.dtype), _out_elt(op)
    s = gemm_like_shape(op)
    kind = lookup(op.kind)
    if kind.backward == "wgrad":
        return _cpu_wgrad_plan(s, eb, threads, line)
    rowmajor = kind.shape == "gemm"
    B, C, H, W, O = s["batch"], s["cin"], s["h"], s["w"], s["cout"]
    KH, KW, ST, PD, OH, OW = s["kh"], s["kw"], s["stride"], s["pad"], s["oh"], s["ow"]
    C4 = (C + 3) // 4
    O4 = (O + 3) // 4
    K = C * KH * KW
    in_bytes = B * C4 * 4 * H * W * eb
    w_bytes = O * K * eb
    out_bytes = B * O4 * 4 * OH * OW * ob
    pack_bytes = K * CPU_TILE_PIXELS * eb
    in_base = 0
    w_base = _align(in_base + in_bytes)
    out_base = _align(w_base + w_bytes)
    pack_base = _align(out_base + out_bytes)
    pixels = B * OH * OW
    tiles = (pixels + CPU_TILE_PIXELS - 1) // CPU_TILE_PIXELS
    oc_blocks = (O + CPU_TILE_OC - 1) // CPU_TILE_OC
    wblock = CPU_TILE_OC * K * eb
    n_seg = (tiles + threads - 1) // threads

    def tile_stream(t: int, bld: _Builder, pack_at: int) -> None:
        px0 = t * CPU_TILE_PIXELS
        npx = min(CPU_TILE_PIXELS, pixels - px0)
        b, rem = divmod(px0, OH * OW)
        oh, ow0 = divmod(rem, OW)
        ow1 = min(OW, ow0 + npx)
        if rowmajor:
            bld.run(in_base + px0 * C * eb, npx * C * eb)
        else:
            iw_lo = max(0, ow0 * ST - PD)
            iw_hi = min(W, (ow1 - 1) * ST - PD + KW)
            ihs = [oh * ST - PD + r for r in range(KH)]
            ihs = np.array([i for i in ihs if 0 <= i < H], dtype=np.int64)
            if ihs.size and iw_hi > iw_lo:
                c4 = np.arange(C4, dtype=np.int64)
                starts = in_base + (((b * C4 + c4[:, None]) * H + ihs[None, :]) * W + iw_lo) * 4 * eb
                bld.runs(starts.ravel(), (iw_hi - iw_lo) * 4 * eb)
        bld.run(pack_at, pack_bytes, WRITE_FULL)
        o4 = np.arange(O4, dtype=np.int64)
        out_starts = out_base + (((b * O4 + o4) * OH + oh) * OW + ow0) * 4 * ob
        for j in range(oc_blocks):
            bld.run(pack_at, pack_bytes)
            bld.run(w_base + j * wblock, wblock)
        bld.runs(out_starts, (ow1 - ow0) * 4 * ob, WRITE_FULL)

    def segment(k: int) -> Streams:
        out = []
        for t in range(threads):
            bld = _Builder(line)
            tile = k * threads + t
            if tile < tiles:
                tile_stream(tile, bld, pack_base + t * _align(pack_bytes))
            out.append(bld.build())
        return out

    return StreamPlan(line, n_seg, segment, in_bytes + w_bytes + out_bytes,
                      notes=dict(tiles=tiles, oc_blocks=oc_blocks))


def _cpu_wgrad_plan(s: dict, eb: int, threads: int, line: int) -> StreamPlan:
    """Weight gradient: dW[K, O] = im2col(X)[K, l] . dY[O, l]^T, the reduction l blocked into
    chunks; step k = (chunk k // e_rounds, round k % e_rounds of dW's 12-row tiles)."""
    B, C, H, W, O = s["batch"], s["cin"], s["h"], s["w"], s["cout"]
    KH, KW, ST, PD, OH, OW = s["kh"], s["kw"], s["stride"], s["pad"], s["oh"], s["ow"]
    C4, O4 = (C + 3) // 4, (O + 3) // 4
    K = C * KH * KW
    in_bytes = B * C4 * 4 * H * W * eb
    w_bytes = O4 * 4 * K * 4
    out_bytes = B * O4 * 4 * OH * OW * eb
    pixels = B * OH * OW
    plane = OH * OW
    lchunk = wgrad_lchunk(pixels, K)
    chunks = (pixels + lchunk - 1) // lchunk
    e_tiles = (K + CPU_TILE_PIXELS - 1) // CPU_TILE_PIXELS
    e_rounds = (e_tiles + threads - 1) // threads
    oc_blocks = (O + CPU_TILE_OC - 1) // CPU_TILE_OC
    pack_bytes = lchunk * CPU_TILE_PIXELS * eb
    w_base = _align(in_bytes)
    out_base = _align(w_base + w_bytes)
    pack_base = _align(out_base + out_bytes)
    ct_base = _align(pack_base + threads * _align(pack_bytes))
    khw = KH * KW

    def rows(p0: int, p1: int):
        """(image, output row, first and end column) of each output-row piece of pixels p0..p1."""
        p = p0
        while p < p1:
            b, rem = divmod(p, plane)
            oh, ow0 = divmod(rem, OW)
            ow1 = min(OW, ow0 + p1 - p)
            yield b, oh, ow0, ow1
            p += ow1 - ow0

    def step(ch: int, i: int, bld: _Builder, pack_at: int) -> None:
        p0, p1 = ch * lchunk, min(pixels, (ch + 1) * lchunk)
        r0, r1 = i * CPU_TILE_PIXELS, min(K, (i + 1) * CPU_TILE_PIXELS)
        c_lo, c_hi = r0 // khw, (r1 - 1) // khw
        for c4 in range(c_lo // 4, c_hi // 4 + 1):
            for r in range(KH):
                if not any(c * khw + r * KW < r1 and c * khw + r * KW + KW > r0
                           for c in range(max(4 * c4, c_lo), min(4 * c4 + 3, c_hi) + 1)):
                    continue
                for b, oh, ow0, ow1 in rows(p0, p1):
                    ih = oh * ST - PD + r
                    iw_lo, iw_hi = max(0, ow0 * ST - PD), min(W, (ow1 - 1) * ST - PD + KW)
                    if 0 <= ih < H and iw_hi > iw_lo:
                        bld.run((((b * C4 + c4) * H + ih) * W + iw_lo) * 4 * eb, (iw_hi - iw_lo) * 4 * eb)
        nbytes = (p1 - p0) * CPU_TILE_PIXELS * eb
        bld.run(pack_at, nbytes, WRITE_FULL)
        dst = w_base if chunks == 1 else ct_base
        for j in range(oc_blocks):
            bld.run(pack_at, nbytes)
            o4s = range(2 * j, min(2 * j + 2, O4))
            for o4 in o4s:
                p = p0
                while p < p1:
                    b, q = divmod(p, plane)
                    m = min(plane - q, p1 - p)
                    bld.run(out_base + ((b * O4 + o4) * plane + q) * 4 * eb, m * 4 * eb)
                    p += m
            for o4 in o4s:
                bld.run(dst + (o4 * K + r0) * 16, (r1 - r0) * 16, WRITE_FULL)
        if chunks > 1:
            for o4 in range(O4):
                bld.run(w_base + (o4 * K + r0) * 16, (r1 - r0) * 16)
                bld.run(ct_base + (o4 * K + r0) * 16, (r1 - r0) * 16)
                bld.run(w_base + (o4 * K + r0) * 16, (r1 - r0) * 16, WRITE)

    def segment(k: int) -> Streams:
        out = []
        for t in range(threads):
            bld = _Builder(line)
            i = (k % e_rounds) * threads + t
            if i < e_tiles:
                step(k // e_rounds, i, bld, pack_base + t * _align(pack_bytes))
            out.append(bld.build())
        return out

    return StreamPlan(line, chunks * e_rounds, segment, in_bytes + w_bytes + out_bytes,
                      notes=dict(tiles=(pixels + CPU_TILE_PIXELS - 1) // CPU_TILE_PIXELS, oc_blocks=oc_blocks,
                                 lchunk=lchunk, chunks=chunks, e_tiles=e_tiles))


def cpu_plane_plan(op, threads: int, line: int = 64) -> StreamPlan:
    """Depthwise conv, pooling and their gradients: one (image, 4-channel group) plane at a time."""
    eb, ob = _elt(op.dtype), _out_elt(op)
    s = _plane_shape(op)
    B, C, H, W = s["batch"], s["c"], s["h"], s["w"]
    KH, ST, PD, OH, OW, KW = s["kh"], s["stride"], s["pad"], s["oh"], s["ow"], s["kw"]
    kind = lookup(op.kind)
    backward = kind.backward in ("dgrad", "bwd")
    wgrad = kind.backward == "wgrad"
    if backward:  # read the output-shaped gradient, write the input-shaped one
        H, W, OH, OW = OH, OW, H, W
        ST, PD = 1, KH - 1 - PD
    C4 = (C + 3) // 4
    in_bytes = B * C4 * H * W * 4 * eb
    out_bytes = B * C4 * OH * OW * 4 * (eb if wgrad else ob)
    in_base = 0
    out_base = _align(in_bytes)
    w_base = _align(out_base + out_bytes)
    planes = B * C4

    # per output row: kh input rows, then the output row (or the dY row for the weight gradient)
    oh_all = np.arange(OH, dtype=np.int64)
    ih = oh_all[:, None] * ST - PD + np.arange(KH, dtype=np.int64)[None, :]
    valid = (ih >= 0) & (ih < H)
    ob_row = OW * 4 * (eb if wgrad else ob)
    rel_starts = np.concatenate([ih * W * 4 * eb, (oh_all * ob_row)[:, None]], axis=1)
    lens = np.concatenate([np.where(valid, W * 4 * eb, 0), np.full((OH, 1), ob_row)], axis=1)
    kinds = np.zeros(lens.shape, dtype=np.uint8)
    kinds[:, -1] = READ if wgrad else WRITE_FULL
    is_out = np.zeros(lens.shape, dtype=bool)
    is_out[:, -1] = True

    def plane(pl: int, bld: _Builder) -> None:
        ibase = in_base + pl * H * W * 4 * eb
        obase = out_base + pl * OH * ob_row
        if kind.kernel == "depthwise":
            bld.run(w_base + (pl % C4) * KH * KW * 4 * 4, KH * KW * 4 * 4)
        bld.runs(rel_starts + np.where(is_out, obase, ibase), lens, kinds)

    def segment(k: int) -> Streams:
        out = []
        for t in range(threads):
            bld = _Builder(line)
            pl = k * threads + t
            if pl < planes:
                plane(pl, bld)
            out.append(bld.build())
        return out

    return StreamPlan(line, (planes + threads - 1) // threads, segment, in_bytes + out_bytes)


def eltwise_plan(op, threads: int, line: int = 64) -> StreamPlan:
    """Element-wise ops: inputs read and outputs written in contiguous chunks, dealt to threads.
    The dynamic requantisation makes two passes (reduce-max, then reload and shift; docs/seeds.md 1)."""
    rd = max(int(op.bytes_read), 0)
    wr = max(int(op.bytes_written), 0)
    total = max(rd, wr, 1)
    chunks = max(1, (total + ELTWISE_CHUNK_BYTES - 1) // ELTWISE_CHUNK_BYTES)
    rchunk = (rd + chunks - 1) // chunks
    wchunk = (wr + chunks - 1) // chunks
    out_base = _align(rd)
    rounds = (chunks + threads - 1) // threads
    passes = lookup(op.kind).passes

    def segment(k: int) -> Streams:
        last = k // rounds == passes - 1
        k %= rounds
        out = []
        for t in range(threads):
            bld = _Builder(line)
            c = k * threads + t
            if c < chunks:
                bld.run(c * rchunk, min(rchunk, rd - c * rchunk))
                if last:
                    bld.run(out_base + c * wchunk, min(wchunk, wr - c * wchunk), WRITE_FULL)
            out.append(bld.build())
        return out

    return StreamPlan(line, rounds * passes, segment, rd + wr)


# ----------------------------------------------------------------------------- DSP kernels

def dsp_conv_plan(op, contexts: int, batch: int, line: int = 128, vtcm_bytes: int = 0,
                  out_elt: int | None = None) -> StreamPlan:
    """HVX conv-like kernels (conv, transposed conv, weight gradient, GEMM): one pass over the
    (padded) batch per output channel; weights in VTCM when they fit."""
    s = gemm_like_shape(op)
    wgrad = lookup(op.kind).backward == "wgrad"
    s["batch"] = batch
    B, C, H, W, O = s["batch"], s["cin"], s["h"], s["w"], s["cout"]
    KH, ST, PD, OH, OW = s["kh"], s["stride"], s["pad"], s["oh"], s["ow"]
    C4 = (C + 3) // 4
    row_in = W * 4                      # one row of a 4-channel group, int8
    in_bytes = B * C4 * H * row_in
    ob = 1 if wgrad else (out_elt or _out_elt(op))   # wgrad reads int8 dY; int8 convs write int32
    out_bytes = B * O * OH * OW * ob
    w_bytes = O * C * s["kh"] * s["kw"] * (4 if wgrad else 1)
    in_base = 0
    out_base = _align(in_bytes)
    w_base = _align(out_base + out_bytes)
    in_vtcm = w_bytes <= vtcm_bytes
    scratch = ((w_base // line, (w_base + w_bytes) // line + 1),) if in_vtcm else ()
    rows = B * OH
    per_image = not in_vtcm and not wgrad   # streams.WEIGHTS_PER_IMAGE_RULE
    per_ctx = ((OH if per_image else rows) + contexts - 1) // contexts
    ci4 = np.arange(C4, dtype=np.int64)

    # per output row: C4 x KH input-row runs, then the output row (invalid rows get length 0)
    r_all = np.arange(rows, dtype=np.int64)
    b_all, oh_all = r_all // OH, r_all % OH
    ih = oh_all[:, None] * ST - PD + np.arange(KH, dtype=np.int64)[None, :]          # (R, KH)
    valid = (ih >= 0) & (ih < H)
    in_starts = in_base + ((b_all[:, None, None] * C4 + ci4[None, :, None]) * H + ih[:, None, :]) * row_in
    in_len = np.broadcast_to(np.where(valid[:, None, :], row_in, 0), in_starts.shape)
    in_starts = in_starts.reshape(rows, -1)
    in_len = in_len.reshape(rows, -1)
    okind = READ if wgrad else WRITE_FULL

    def segment(k: int) -> Streams:
        oc = k % O if per_image else k
        r0, r1 = ((k // O) * OH, (k // O + 1) * OH) if per_image else (0, rows)
        out_starts = out_base + ((b_all * O + oc) * OH + oh_all) * OW * ob
        starts = np.concatenate([in_starts, out_starts[:, None]], axis=1)
        lens = np.concatenate([in_len, np.full((rows, 1), OW * ob, dtype=np.int64)], axis=1)
        kinds = np.zeros(starts.shape, dtype=np.uint8)
        kinds[:, -1] = okind
        out = []
        for c in range(contexts):
            bld = _Builder(line)
            if not in_vtcm:
                bld.run(w_base + oc * (w_bytes // O), w_bytes // O)
            sl = slice(r0 + c * per_ctx, min(r1, r0 + (c + 1) * per_ctx))
            bld.runs(starts[sl], lens[sl], kinds[sl])
            out.append(bld.build())
        return out

    return StreamPlan(line, O * B if per_image else O, segment, in_bytes + out_bytes + (0 if in_vtcm else w_bytes),
                      scratch=scratch, notes=dict(weights_in_vtcm=in_vtcm, padded_batch=B, per_image=per_image))


def dsp_plane_plan(op, contexts: int, batch: int, line: int = 128) -> StreamPlan:
    """HVX depthwise conv and pooling: one (image, channel) plane per step, rows in lanes."""
    eb = 1
    ob = _out_elt(op)
    s = _plane_shape(op)
    B, C, H, W = batch, s["c"], s["h"], s["w"]
    KH, ST, PD, OH, OW = s["kh"], s["stride"], s["pad"], s["oh"], s["ow"]
    in_bytes = B * C * H * W * eb
    out_base = _align(in_bytes)
    planes = B * C

    def segment(k: int) -> Streams:
        out = []
        for c in range(contexts):
            bld = _Builder(line)
            pl = k * contexts + c
            if pl < planes:
                ibase = pl * H * W * eb
                for oh in range(OH):
                    starts = np.array([ibase + i * W * eb for i in (oh * ST - PD + r for r in range(KH)) if 0 <= i < H],
                                      dtype=np.int64)
                    bld.runs(starts, W * eb)
                    bld.run(out_base + (pl * OH + oh) * OW * ob, OW * ob, WRITE_FULL)
            out.append(bld.build())
        return out

    return StreamPlan(line, (planes + contexts - 1) // contexts, segment, in_bytes + planes * OH * OW * ob)
