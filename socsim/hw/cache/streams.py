"""Line-granularity access streams of the training kernels, following their loop order and tiling.

The plans here hold each kernel's geometry; the streams themselves are written by the compiled
generators of :mod:`streams_numba` (one call produces all the steps the sampler needs), and
:mod:`streams_ref` is their plain-numpy twin (the per-step builder, tests check they agree).

A :class:`StreamPlan` splits an op into ``n_segments`` homogeneous steps of its outermost loop
(an output-channel pass, a round of GEMM tiles, a round of channel planes); ``segment(k)``
returns one (lines, kinds) stream per thread for step ``k``.  The sampler in
:mod:`socsim.hw.memory` simulates the first steps and extrapolates the steady state, so the
reuse that the tiling implies (weights across tiles, inputs across passes) is simulated, not
assumed.  Consecutive touches of one line inside a run collapse into one access (they are
first-level hits and do not change replacement order).

CPU kernels (MNN-style, NC4HW4 layout, Ma et al. "MNN", MLSys 2020; MNN source
``ConvolutionTiledExecutor`` and ``MNNGetMatMulPackMode``: arm64 FP32 packs eP=12 output
pixels x hP=8 output channels):
  conv / transposed conv / GEMM: for each tile of 12 output pixels (tiles dealt round-robin to
  threads): pack the im2col slice (reads kh rows of each 4-channel group), then for each block
  of 8 output channels read the pack buffer and the weight block, write the 12x(cout) outputs.
  weight gradient: MNN lowers Conv2DBackPropFilter to Im2Col + MatMul
  (GeometryConv2DBackPropFilter: C[ic*kh*kw, oc] = im2col(X)[ic*kh*kw, n*oh*ow] x dY^T), run by
  CPUMatMul / StrassenMatrixComputor: the reduction l = n*oh*ow is blocked into chunks of
  :func:`wgrad_lchunk` pixels; in each chunk the 12-row tiles of dW (eP rows of C) are dealt
  round-robin to the threads (_generateTrivalMatMul: ``for i = tId; i < unitNumber; i +=
  numberThread``); a thread packs its tile's im2col rows over the chunk, then for each 8-column
  block reads the packed tile and dY's block (MNNPackedMatMul: the 12x8 accumulator stays in
  registers over the chunk's whole reduction) and writes the 12x8 result once; with several
  chunks each chunk's product goes to a partial buffer that is then added into dW (modelled for
  the first chunk too, which MNN writes to dW directly).  So dW moves once per chunk, not
  once per pixel tile.  Not modelled here: the Strassen split MNN tries first for large GEMMs;
  costed apart in socsim.hw.cpu: the materialised im2col and dY-transpose buffers (im2col_spill_bytes), the
  one-thread packing of dY's panel (serial_pack_elements), the round-robin tiles (split_share).
  depthwise conv / pooling / their gradients: one (image, 4-channel) plane at a time, row by
  row reading kh input rows.  element-wise: contiguous chunks.
DSP kernels (Hexagon NN-style HVX; pixels in vector lanes, 4 input channels per 32-bit lane so
``vrmpy`` does 32 pixels x 4 channels per instruction; weights in VTCM when they fit):
  conv / weight gradient / transposed conv / GEMM: for each output channel (the weight scalar
  Rt of ``vrmpy(Vu.ub, Rt.b)``), sweep the whole (padded) batch: for each output row, for each
  4-channel group, kh input rows; write the output channel's row (int32).  So the input is
  re-read once per output channel, from L2 when the batch fits and from DRAM when it does not
  (the cache cliff of pub:dsp_conv_latency_ms).  HVX contexts split the rows of each pass.
  Weights larger than the VTCM: one image at a time (:data:`WEIGHTS_PER_IMAGE_RULE`), so the
  generation's VTCM size decides the loop order (V66's 256 KB against V68's 4 MB).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from socsim.hw.cache import streams_numba as sn
from socsim.workload.opkinds import lookup

PAGE = 4096
# MNN arm64 FP32 GEMM packing (MNNGetMatMulPackMode: eP=12, hP=8).
CPU_TILE_PIXELS = 12
CPU_TILE_OC = 8
# Elements of the reduction block of MNN's GEMM (StrassenMatrixComputor::_generateBasicMatMul:
# lLimit = 32768 / (min(eP, e) + hP), source/backend/cpu/compute/StrassenMatrixComputor.cpp).
WGRAD_L_LIMIT = 32768
# Elements of an element-wise op handled per thread per step.  A numerical/modelling parameter,
# not a measured one: the chunk is the outer-loop step that socsim.hw.memory simulates and
# extrapolates (contiguous chunks dealt round-robin to the threads), not MNN's own split.
# Element-wise streams touch each line once, so their hit rates depend little on it; 256 KB
# (4096 64-byte lines) keeps steps small next to the 400 k-access sampling budget.  Sampling
# error against full simulation: docs/memory.md, "Sampling".
ELTWISE_CHUNK_BYTES = 256 * 1024

Streams = list[tuple[np.ndarray, np.ndarray]]

# Hexagon NN's supernode (nnlib hexagon/ops/src/op_supernode_new.c, slice_for_cache; NN_VERSION
# 0x00021401, the library family Mandheling builds on, hexagon_nn 2.10): when the weights fit in
# the VTCM the node sweeps all batches per weight chunk ("weights fit": inner_act_batches =
# batches); when they do not it runs one image at a time ("weights dont fit": inner_act_batches
# = 1) and copies the weight chunks from DDR into the VTCM again for each image
# (supernode_do_memcpy per slice).  Activations never sit in the VTCM in that code (its
# VTCM_CIRCBUF_SIZE is 0): they stream through the L2 with l2fetch.
WEIGHTS_PER_IMAGE_RULE = "weights > VTCM: one image per sweep, weights re-copied per image (nnlib slice_for_cache)"


@dataclass
class StreamPlan:
    """An op's kernel as ``n_segments`` outer-loop steps of ``threads`` streams each."""

    line_bytes: int
    n_segments: int
    threads: int
    kernel: int                     # streams_numba kernel id
    params: np.ndarray              # int64, in the order of streams_numba.FIELDS[kernel]
    footprint_bytes: int
    scratch: tuple[tuple[int, int], ...] = ()
    notes: dict = field(default_factory=dict)

    def generate(self, k0: int = 0, k1: int | None = None, budget: int = 1 << 62,
                 min_segs: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Streams of steps k0.. up to k1 (or until ``budget`` accesses and ``min_segs`` steps):
        (lines, kinds, offsets, steps); group ``s * threads + t`` is ``offsets[g]:offsets[g+1]``."""
        k1 = self.n_segments if k1 is None else min(k1, self.n_segments)
        steps = max(k1 - k0, 0)
        off = np.zeros(steps * self.threads + 1, dtype=np.int64)
        cap = int(min(budget, 1 << 24)) + (1 << 14)
        while True:
            lines = np.empty(cap, dtype=np.int64)
            kinds = np.empty(cap, dtype=np.uint8)
            n, done = sn.generate(self.kernel, self.params, self.line_bytes, k0, k1, budget, min_segs,
                                  lines, kinds, off)
            if n <= cap:
                return lines[:n], kinds[:n], off[:done * self.threads + 1], int(done)
            cap = int(n)

    def segment(self, k: int) -> Streams:
        """One step's (lines, kinds) per thread."""
        lines, kinds, off, _ = self.generate(k, k + 1)
        return [(lines[off[t]:off[t + 1]], kinds[off[t]:off[t + 1]]) for t in range(self.threads)]


# A step is handed to the periodic driver (hier_period) when its weight-block loop is at least
# this long: shorter loops have no room to skip, and the driver's snapshots would cost more than
# they save.  A method parameter (exact either way), not a model constant.
PERIOD_MIN_ACCESSES = 1 << 20


def period_hint(plan: StreamPlan, min_accesses: int = PERIOD_MIN_ACCESSES) -> tuple[int, int, int, int] | None:
    """How a GEMM step's stream repeats: (lo, hi, delta, per_iter), the weight region's lines
    [lo, hi), the lines a body iteration moves them by, and the accesses per iteration (the pack
    buffer re-read, then one weight block: streams_numba._cpu_conv_tile); None for other kernels
    and for loops too short to skip in.  Only a hint: the driver checks the stream access by
    access before it skips (hier_period).  None for the weight gradient: its body
    (streams_numba._cpu_wgrad_step: the pack re-read, dY's block over the chunk, the dW tile's
    write) moves two regions by different strides, which one (lo, hi, delta) cannot describe."""
    if plan.kernel != sn.CPU_CONV:
        return None
    g = dict(zip(sn.FIELDS[sn.CPU_CONV], (int(x) for x in plan.params)))
    if g["wgrad"]:
        return None
    line = plan.line_bytes
    if g["w_base"] % line or g["wblock"] % line or g["pack_base"] % line or g["pack_stride"] % line:
        return None
    wl = g["wblock"] // line
    jstep = 1
    per_iter = (g["pack_bytes"] + line - 1) // line + wl
    iters = g["oc_blocks"] // jstep
    if wl <= 0 or iters * per_iter < min_accesses:
        return None
    if g["w_base"] + g["oc_blocks"] * g["wblock"] > g["out_base"]:
        return None     # the last block (cout not a multiple of 8) runs into the output's lines

    return g["w_base"] // line, g["out_base"] // line, jstep * wl, per_iter


def touches_once(plan: StreamPlan) -> bool:
    """Whether the plan's streams touch each line once, bar a few: an element-wise op in one
    pass (its chunks share at most a boundary line when a chunk is not whole lines).  Only a
    hint for the cache driver's ring path (hierarchy.Hierarchy.run_steps, hier_fifo), which
    finds the repeated lines itself and falls back to the plain driver when they are many."""
    return plan.kernel == sn.ELTWISE and int(plan.params[sn.FIELDS[sn.ELTWISE].index("passes")]) == 1


def _align(x: int) -> int:
    return (x + PAGE - 1) // PAGE * PAGE


def _plan(kernel: int, line: int, n_segments: int, footprint: int, scratch=(), notes=None, **geom) -> StreamPlan:
    params = np.array([int(geom[f]) for f in sn.FIELDS[kernel]], dtype=np.int64)
    return StreamPlan(line, int(n_segments), int(geom["threads"]), kernel, params, int(footprint), scratch,
                      notes or {})


def _elt(dtype: str) -> int:
    return {"fp32": 4, "int32": 4, "fp16": 2, "int8": 1}.get(dtype, 4)


def _out_elt(op) -> int:
    """Bytes per output element: int8 convolutions and GEMMs accumulate to int32 (NITI)."""
    if op.dtype == "int8" and lookup(op.kind).is_mac:
        return 4
    return _elt(op.dtype)


def _conv_shape(p: dict) -> dict:
    """Convolution shape from op params (oh/ow derived when absent)."""
    s = dict(batch=p.get("batch", 1), cin=p["cin"], h=p["h"], w=p["w"], cout=p["cout"],
             kh=p.get("kh", 1), kw=p.get("kw", 1), stride=p.get("stride", 1), pad=p.get("pad", 0))
    s["oh"] = p.get("oh", (s["h"] + 2 * s["pad"] - s["kh"]) // s["stride"] + 1)
    s["ow"] = p.get("ow", (s["w"] + 2 * s["pad"] - s["kw"]) // s["stride"] + 1)
    return s


def _as_dgrad_conv(s: dict) -> dict:
    """The error gradient of a conv is a (transposed) conv over dY: dY's cout channels in,
    cin channels out, kernel rotated; modelled as a stride-1 conv of the same kernel over the
    oh x ow gradient producing h x w (the zero-dilation of strided layers is not touched)."""
    return dict(batch=s["batch"], cin=s["cout"], h=s["oh"], w=s["ow"], cout=s["cin"], kh=s["kh"],
                kw=s["kw"], stride=1, pad=s["kh"] - 1 - s["pad"], oh=s["h"], ow=s["w"])


def gemm_like_shape(op) -> dict:
    """The conv-shaped view every GEMM-like kernel streams over: a GEMM (m, k, n) as a 1x1 conv
    over m pixels, a conv's error gradient as the transposed conv over dY."""
    kind = lookup(op.kind)
    if kind.shape == "gemm":
        p = op.p
        return dict(batch=1, cin=p["k"], h=1, w=p["m"], cout=p["n"], kh=1, kw=1, stride=1, pad=0, oh=1, ow=p["m"])
    s = _conv_shape(op.p)
    return _as_dgrad_conv(s) if kind.backward == "dgrad" and kind.kernel == "gemm" else s


# ----------------------------------------------------------------------------- CPU kernels

def wgrad_lchunk(pixels: int, k: int = CPU_TILE_PIXELS) -> int:
    """Pixels (the reduction l = batch x oh x ow) per chunk of MNN's weight-gradient GEMM:
    StrassenMatrixComputor::_generateBasicMatMul runs the whole reduction in one pass when
    l <= lLimit = 32768 / (min(eP, e) + hP) (so the 12-row A tile and an 8-column B block, in
    elements, fit a 128 KB working set) and otherwise in chunks of lLimit rounded down to the
    pack of 4, adding each chunk's product into C (MNNMatrixAdd).  ``k``: the GEMM's e (dW's
    rows, cin x kh x kw)."""
    limit = WGRAD_L_LIMIT // (min(CPU_TILE_PIXELS, k) + CPU_TILE_OC)
    if pixels <= limit:
        return pixels
    # as many chunks as MNN's, of equal size: the totals are the same (the dY and im2col traffic
    # go with the pixels, the partial sums with the number of chunks) and every step of the
    # stream is alike, so the sampler's extrapolation from the first chunk holds (a short last
    # chunk would be counted as a full one)
    chunks = -(-pixels // (limit // 4 * 4))
    return -(-pixels // chunks)


def cpu_conv_plan(op, threads: int, line: int = 64) -> StreamPlan:
    """MNN-style im2col + packed GEMM (forward, transposed, GEMM and weight gradient)."""
    eb, ob = _elt(op.dtype), _out_elt(op)
    s = gemm_like_shape(op)
    kind = lookup(op.kind)
    rowmajor = kind.shape == "gemm"
    wgrad = kind.backward == "wgrad"
    B, C, H, W, O = s["batch"], s["cin"], s["h"], s["w"], s["cout"]
    KH, KW, OH, OW = s["kh"], s["kw"], s["oh"], s["ow"]
    C4, O4 = (C + 3) // 4, (O + 3) // 4
    K = C * KH * KW
    in_bytes = B * C4 * 4 * H * W * eb
    w_bytes = O4 * 4 * K * 4 if wgrad else O * K * eb     # dW accumulates in fp32/int32, [O/4, K, 4]
    out_bytes = B * O4 * 4 * OH * OW * (eb if wgrad else ob)   # wgrad reads dY here
    pixels = B * OH * OW
    tiles = (pixels + CPU_TILE_PIXELS - 1) // CPU_TILE_PIXELS
    oc_blocks = (O + CPU_TILE_OC - 1) // CPU_TILE_OC
    if wgrad:   # the A tile: 12 rows of im2col over a chunk of the reduction
        lchunk = wgrad_lchunk(pixels, K)
        chunks = (pixels + lchunk - 1) // lchunk
        e_tiles = (K + CPU_TILE_PIXELS - 1) // CPU_TILE_PIXELS
        e_rounds = (e_tiles + threads - 1) // threads
        pack_bytes = lchunk * CPU_TILE_PIXELS * eb
        n_seg = chunks * e_rounds
    else:
        lchunk = chunks = e_tiles = e_rounds = 0
        pack_bytes = K * CPU_TILE_PIXELS * eb
        n_seg = (tiles + threads - 1) // threads
    w_base = _align(in_bytes)
    out_base = _align(w_base + w_bytes)
    pack_base = _align(out_base + out_bytes)
    ct_base = _align(pack_base + threads * _align(pack_bytes))     # the chunk's partial dW
    notes = dict(tiles=tiles, oc_blocks=oc_blocks)
    if wgrad:
        notes.update(lchunk=lchunk, chunks=chunks, e_tiles=e_tiles)
    return _plan(sn.CPU_CONV, line, n_seg, in_bytes + w_bytes + out_bytes, notes=notes,
                 threads=threads, eb=eb, ob=ob, rowmajor=rowmajor, wgrad=wgrad, C=C, H=H, W=W, C4=C4, O4=O4, KH=KH,
                 KW=KW, ST=s["stride"], PD=s["pad"], OH=OH, OW=OW, in_base=0, w_base=w_base, out_base=out_base,
                 pack_base=pack_base, pack_stride=_align(pack_bytes), pack_bytes=pack_bytes, pixels=pixels,
                 tiles=tiles, oc_blocks=oc_blocks, wblock=CPU_TILE_OC * K * (4 if wgrad else eb),
                 tile_px=CPU_TILE_PIXELS, K=K, lchunk=lchunk, e_tiles=e_tiles, e_rounds=e_rounds, ct_base=ct_base)


def _plane_shape(op) -> dict:
    p = dict(op.p)
    if lookup(op.kind).kernel == "depthwise":
        c = p.get("cin", p.get("c"))
        s = _conv_shape({**p, "cin": c, "cout": c})
        s["c"] = c
    else:  # pools
        k = p.get("k", 2)
        st = p.get("stride", k)
        s = dict(batch=p.get("batch", 1), c=p["c"], h=p["h"], w=p["w"], kh=k, kw=k, stride=st, pad=0,
                 oh=p.get("oh", (p["h"] - k) // st + 1), ow=p.get("ow", (p["w"] - k) // st + 1))
    return s


def cpu_plane_plan(op, threads: int, line: int = 64) -> StreamPlan:
    """Depthwise conv, pooling and their gradients: one (image, 4-channel group) plane at a time;
    per output row kh input rows, then the output row (the dY row for the weight gradient)."""
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
    out_base = _align(in_bytes)
    planes = B * C4
    return _plan(sn.CPU_PLANE, line, (planes + threads - 1) // threads, in_bytes + out_bytes,
                 threads=threads, dw=kind.kernel == "depthwise", wgrad=wgrad, H=H, W=W, C4=C4, KH=KH, KW=KW,
                 ST=ST, PD=PD, OH=OH, row_in=W * 4 * eb, ob_row=OW * 4 * (eb if wgrad else ob), in_base=0,
                 out_base=out_base, w_base=_align(out_base + out_bytes), planes=planes)


def eltwise_plan(op, threads: int, line: int = 64) -> StreamPlan:
    """Element-wise ops: inputs read and outputs written in contiguous chunks, dealt to threads,
    in as many passes as the kind's ``passes`` (the dynamic requantisation makes two: reduce-max,
    then reload and shift; docs/seeds.md 1)."""
    return eltwise_stream(int(op.bytes_read), int(op.bytes_written), threads, line, lookup(op.kind).passes)


def eltwise_stream(read_bytes: int, write_bytes: int, threads: int, line: int = 64, passes: int = 1) -> StreamPlan:
    """The element-wise stream of ``read_bytes`` in and ``write_bytes`` out, in ``passes`` passes
    (the output is written in the last)."""
    rd = max(int(read_bytes), 0)
    wr = max(int(write_bytes), 0)
    total = max(rd, wr, 1)
    chunks = max(1, (total + ELTWISE_CHUNK_BYTES - 1) // ELTWISE_CHUNK_BYTES)
    rounds = (chunks + threads - 1) // threads
    return _plan(sn.ELTWISE, line, rounds * passes, rd + wr, threads=threads, rd=rd, wr=wr, chunks=chunks,
                 rchunk=(rd + chunks - 1) // chunks, wchunk=(wr + chunks - 1) // chunks, out_base=_align(rd),
                 rounds=rounds, passes=passes)


# ----------------------------------------------------------------------------- DSP kernels

def dsp_conv_plan(op, contexts: int, batch: int, line: int = 128, vtcm_bytes: int = 0,
                  out_elt: int | None = None) -> StreamPlan:
    """HVX conv-like kernels (conv, transposed conv, weight gradient, GEMM): weights in VTCM when
    they fit, and then one pass over the (padded) batch per output channel; weights larger than
    the VTCM: one image at a time, its output channels in turn, each channel's weights copied in
    again for every image (:data:`WEIGHTS_PER_IMAGE_RULE`)."""
    s = gemm_like_shape(op)
    wgrad = lookup(op.kind).backward == "wgrad"
    B, C, H, W, O = batch, s["cin"], s["h"], s["w"], s["cout"]
    OH, OW = s["oh"], s["ow"]
    C4 = (C + 3) // 4
    row_in = W * 4                      # one row of a 4-channel group, int8
    in_bytes = B * C4 * H * row_in
    ob = 1 if wgrad else (out_elt or _out_elt(op))   # wgrad reads int8 dY; int8 convs write int32
    out_bytes = B * O * OH * OW * ob
    w_bytes = O * C * s["kh"] * s["kw"] * (4 if wgrad else 1)
    out_base = _align(in_bytes)
    w_base = _align(out_base + out_bytes)
    in_vtcm = w_bytes <= vtcm_bytes
    scratch = ((w_base // line, (w_base + w_bytes) // line + 1),) if in_vtcm else ()
    rows = B * OH
    # the supernode's filter is the op's weights; a weight gradient's int32 dW is its output
    # (accumulated over the batch, not re-copied per image): it keeps the batch sweep
    per_image = not in_vtcm and not wgrad
    pass_rows = OH if per_image else rows
    return _plan(sn.DSP_CONV, line, O * B if per_image else O, in_bytes + out_bytes + (0 if in_vtcm else w_bytes),
                 scratch=scratch, notes=dict(weights_in_vtcm=in_vtcm, padded_batch=B, per_image=per_image),
                 threads=contexts, in_vtcm=in_vtcm, wgrad=wgrad, C4=C4, H=H, KH=s["kh"], ST=s["stride"],
                 PD=s["pad"], OH=OH, O=O, row_in=row_in, orow=OW * ob, in_base=0, out_base=out_base,
                 w_base=w_base, w_per_oc=w_bytes // O, rows=rows, per_ctx=(pass_rows + contexts - 1) // contexts,
                 per_image=per_image)


def dsp_plane_plan(op, contexts: int, batch: int, line: int = 128) -> StreamPlan:
    """HVX depthwise conv and pooling: one (image, channel) plane per step, rows in lanes."""
    ob = _out_elt(op)
    s = _plane_shape(op)
    B, C, H, W = batch, s["c"], s["h"], s["w"]
    OH, OW = s["oh"], s["ow"]
    in_bytes = B * C * H * W
    planes = B * C
    return _plan(sn.DSP_PLANE, line, (planes + contexts - 1) // contexts, in_bytes + planes * OH * OW * ob,
                 threads=contexts, H=H, W=W, KH=s["kh"], ST=s["stride"], PD=s["pad"], OH=OH, orow=OW * ob,
                 out_base=_align(in_bytes), planes=planes)


def op_macs(op) -> int:
    """Multiply-accumulates of a conv-like op: ``op.macs`` when the graph filled it in, else
    derived from the shape (forward, error and weight gradients all cost the forward's MACs)."""
    if op.macs:
        return int(op.macs)
    p = op.p
    kind = lookup(op.kind)
    if kind.shape == "gemm":
        return p["m"] * p["k"] * p["n"]
    if kind.kernel == "depthwise":
        c = p.get("cin", p.get("c"))
        s = _conv_shape({**p, "cin": c, "cout": c})
        return s["batch"] * c * s["oh"] * s["ow"] * s["kh"] * s["kw"]
    if kind.kernel == "gemm":
        s = _conv_shape(p)
        g = p.get("groups", 1) or 1
        return s["batch"] * s["cout"] * s["oh"] * s["ow"] * (s["cin"] // g) * s["kh"] * s["kw"]
    return 0
