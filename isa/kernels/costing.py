"""The integration contract: cycles of an INT8 training op on one HVX context, from its kernel.

``profile_op`` builds the op's real HVX kernel program(s) for the requested shape, emulates a
few representative tiles (values and timing, on deterministic random data) and scales the
per-tile timing by the number of tiles the op needs.  Control flow in these kernels is static,
so a tile's timing is exact for every tile of the same shape.  Results are memoised per shape.

Data is assumed resident in L2/VTCM (no DDR misses): the engine adds DDR traffic itself.

Requantisation accounting (docs/hvx.md): producers (gemm, conv2d, ...) are charged with their int32
store epilogue.  ``requant_dynamic(n)`` is the two extra passes over that stored int32 tensor
(reload for max|x| and the clz shift, reload to shift and pack); ``requant_static(n)`` is only
the incremental cost of applying the known shift in the producer's epilogue instead.
Host-side layout work (padding, weight packing and rotation, dY dilation for dgrad) is not
counted; Mandheling runs such transforms on the CPU.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

import numpy as np

from isa.hvx import HvxState, Program, run
from isa.hvx.timing import Timing, TimingConfig, analyze

from . import conv, eltwise, gemm, wgrad
from .layout import Geometry
from .spatial import build_phase_split


@dataclass(frozen=True)
class KernelProfile:
    kind: str
    compute_cycles: int      # cycles for the whole op on ONE HVX context, data resident in L2/VTCM
    packets: int
    stall_cycles: MappingProxyType  # cause -> cycles (read-only mapping)
    macs: int
    bytes_loaded: int        # HVX vector bytes read
    bytes_stored: int
    tiles_emulated: int      # representative tiles actually emulated

    def __hash__(self) -> int:
        return hash((self.kind, self.compute_cycles, self.packets, tuple(sorted(self.stall_cycles.items())),
                     self.macs, self.bytes_loaded, self.bytes_stored, self.tiles_emulated))


_CONV = ("batch", "cin", "h", "w", "cout", "kh", "kw", "stride", "pad")
#: the op kinds with an emulated kernel and the shape parameters ``profile_op`` takes for each
PARAMS: dict[str, tuple[str, ...]] = {
    "gemm": ("m", "k", "n"), "conv2d": _CONV, "dwconv2d": ("batch", "c", "h", "w", "kh", "kw", "stride", "pad"),
    "conv2d_wgrad": _CONV, "conv2d_dgrad": _CONV, "requant_dynamic": ("n",), "requant_static": ("n",),
    "maxpool": ("batch", "c", "h", "w", "k", "stride"), "relu": ("n",), "reducemax": ("n",),
}
KINDS = tuple(PARAMS)


def profile_op(kind: str, **params) -> KernelProfile:
    """Profile one op.  Parameters per kind:
    gemm(m, k, n); conv2d / conv2d_wgrad / conv2d_dgrad(batch, cin, h, w, cout, kh, kw, stride, pad);
    dwconv2d(batch, c, h, w, kh, kw, stride, pad); requant_dynamic / requant_static / relu /
    reducemax(n); maxpool(batch, c, h, w, k, stride).  Optional ``paired=True`` times a thread
    that shares its cluster with another issuing thread."""
    if kind not in KINDS:
        raise ValueError(f"unknown op kind {kind!r}; known: {KINDS}")
    return _profile(kind, tuple(sorted(params.items())))


@lru_cache(maxsize=1024)
def _profile(kind: str, items: tuple) -> KernelProfile:
    p = dict(items)
    cfg = TimingConfig(paired=bool(p.pop("paired", False)))
    total, macs, emulated = _PROFILERS[kind](cfg, **p)
    return KernelProfile(kind, int(total.cycles), int(total.packets),
                         MappingProxyType({c: v for c, v in sorted(total.stalls.items()) if v}), int(macs),
                         int(total.vector_bytes_loaded), int(total.vector_bytes_stored), emulated)


@lru_cache(maxsize=4096)
def _tile(build, args: tuple, cfg: TimingConfig, emulate: bool = True) -> Timing:
    """Timing of the program ``build(*args)``: emulated on random data (values and timing) or,
    with ``emulate=False``, statically analysed.  Memoised on the program's own shape, so ops that
    differ only in how many tiles they run (the batch, most often: Mandheling's batch splitting
    profiles one layer at several) emulate it once.  The result is shared: read it, do not add to it."""
    prog = build(*args)
    return _emulate(prog, cfg) if emulate else analyze(prog, cfg)


def _emulate(prog: Program, cfg: TimingConfig, seed: int = 0) -> Timing:
    """Run one tile of ``prog`` on random bytes (every buffer) and return its timing."""
    rng = np.random.default_rng(seed)
    st = HvxState(1, prog.mem_bytes)
    st.mem[:] = rng.integers(0, 256, size=st.mem.shape, dtype=np.uint8)
    for b in prog.buffers:
        if b.name == "S":       # requant scale slot: keep shifts in range
            st.mem[:, b.offset:b.offset + 4] = np.array([7], np.int32).view(np.uint8)
    return run(prog, st, cfg).timing


def _phase_cost(g: Geometry, planes: int, cfg: TimingConfig) -> Timing:
    t = Timing()
    if g.stride == 2:
        t.add(_tile(build_phase_split, (g.hp, g.wp), cfg), planes)
    return t


def _gemm(cfg, m, k, n):
    t = _tile(gemm.build_gemm_tile, (int(k),), cfg)
    tiles = -(-m // gemm.MR) * -(-n // gemm.NCOL)
    return t.scaled(tiles), m * k * n, 1


def _conv2d(cfg, batch, cin, h, w, cout, kh, kw, stride, pad):
    g = Geometry(h, w, kh, kw, stride, pad)
    one = _tile(conv.build_conv_tile, (g, int(cin), int(cout), 1), cfg)         # im2col + 1 row block (emulated)
    two = _tile(conv.build_conv_tile, (g, int(cin), int(cout), 2), cfg, False)  # same program with 2 row blocks
    per_block = Timing()
    per_block.add(two)
    per_block.add(one, -1)
    nrb = -(-cout // gemm.MR)
    tile = Timing()
    tile.add(one)
    tile.add(per_block, nrb - 1)
    total = _phase_cost(g, batch * cin, cfg)
    total.add(tile, batch * g.ntiles)
    return total, batch * cout * g.oh * g.ow * cin * kh * kw, 1 + (g.stride == 2)


def _conv2d_dgrad(cfg, batch, cin, h, w, cout, kh, kw, stride, pad):
    # transposed conv = stride-1 conv of the dilated, padded dY with rotated weights
    total, _, em = _conv2d(cfg, batch, cout, h + kh - 1, w + kw - 1, cin, kh, kw, 1, 0)
    g = Geometry(h, w, kh, kw, stride, pad)
    return total, batch * cout * g.oh * g.ow * cin * kh * kw, em


def _dwconv2d(cfg, batch, c, h, w, kh, kw, stride, pad):
    g = Geometry(h, w, kh, kw, stride, pad)
    total = _phase_cost(g, batch * c, cfg)
    total.add(_tile(conv.build_dwconv_tile, (g,), cfg), batch * c * g.ntiles)
    return total, batch * c * g.oh * g.ow * kh * kw, 1 + (g.stride == 2)


def _conv2d_wgrad(cfg, batch, cin, h, w, cout, kh, kw, stride, pad):
    g = Geometry(h, w, kh, kw, stride, pad)
    phase, shift = g.taps()[0]
    t = _tile(wgrad.build_wgrad_tile, (g, int(batch), phase, shift), cfg)
    tiles = kh * kw * -(-cout // wgrad.CB) * -(-cin // wgrad.IB)
    total = _phase_cost(g, batch * cin, cfg)
    total.add(t, tiles)
    return total, batch * cout * g.oh * g.ow * cin * kh * kw, 1 + (g.stride == 2)


_REP_VECS = 16   # vectors in the representative emulated chunk of an elementwise op


def _elementwise(builder, per_vec):
    def prof(cfg, n):
        nvec = max(1, -(-int(n) // per_vec))
        _tile(builder, (min(nvec, _REP_VECS),), cfg)                  # values on a representative chunk
        return _tile(builder, (nvec,), cfg, False).scaled(1), 0, 1    # exact timing of the full-length program
    return prof


def _maxpool(cfg, batch, c, h, w, k, stride):
    g = Geometry(h, w, k, k, stride, 0)
    total = _phase_cost(g, batch * c, cfg)
    total.add(_tile(eltwise.build_maxpool_tile, (g,), cfg), batch * c * g.ntiles)
    return total, 0, 1 + (g.stride == 2)


_EPILOGUE_K = 64   # reduction length of the GEMM tile whose epilogues are compared (the delta does not depend on it)


def _requant_static(cfg, n):
    """Static rescale fused into the producer (Mandheling): the known shift is applied to the int32
    accumulators in registers and one int8 vector per row is stored.  Its cost is the GEMM/conv
    tile with the requant_static epilogue minus the same tile with the int32 store epilogue (which
    the producer op is charged), per 512-value tile; byte counts are deltas too (int8 stores
    replace int32 stores, so bytes_stored is negative)."""
    base = _tile(gemm.build_gemm_tile, (_EPILOGUE_K, "int32"), cfg, False)
    fused = _tile(gemm.build_gemm_tile, (_EPILOGUE_K, "requant_static"), cfg)
    delta = Timing()
    delta.add(fused)
    delta.add(base, -1)
    per_tile = gemm.MR * gemm.NCOL
    return delta.scaled(-(-int(n) // per_tile)), 0, 1


_PROFILERS = {
    "gemm": _gemm,
    "conv2d": _conv2d,
    "conv2d_dgrad": _conv2d_dgrad,
    "dwconv2d": _dwconv2d,
    "conv2d_wgrad": _conv2d_wgrad,
    "requant_dynamic": _elementwise(eltwise.build_requant_dynamic, 128),
    "requant_static": _requant_static,
    "maxpool": _maxpool,
    "relu": _elementwise(eltwise.build_relu, 128),
    "reducemax": _elementwise(eltwise.build_reducemax, 128),
}

