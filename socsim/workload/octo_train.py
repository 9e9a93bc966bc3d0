"""Octo INT8 training run for real on the emulated HVX kernels, on small synthetic data.

docs/seeds.md 5 (Octo, USENIX ATC '21; Zhou et al.) on the same tiny CNN and 4-class Gaussian-blob
images as :mod:`socsim.workload.niti_train` (convs of 3x3 with ReLU and 2x2 max-pool, then one
linear layer; batch 16 of 1x8x8).  Weights are FP32 masters updated by plain SGD; only the dot
products change with the mode:

- ``fp32``: everything in floating point (the baseline).
- ``fake-quant``: X and W are quantised and dequantised (asymmetric, stochastic rounding) before
  each forward dot product, which runs in floating point; the backward pass is floating point on
  the dequantised tensors (straight-through), as quantisation-aware training does.
- ``int8-no-lac``: the forward conv/GEMM run on the HVX emulator
  (:func:`isa.kernels.conv.conv2d_hvx`, :func:`isa.kernels.gemm.gemm_hvx`) on the int8 codes of
  X and W with int32 accumulation; the zero-point corrections are integer and the result is
  dequantised by the scale product.  The backward dot products are integer too (numpy integer
  references, :mod:`isa.kernels.reference`, as NITI's are), on errors quantised symmetrically over
  their whole range max|e| into [-127, 127]; no compensation, no clipping.
- ``octo``: ``int8-no-lac`` plus a loss-aware compensation (LAC) layer after each conv (before
  its ReLU; the net has no batch norm) and parameterised range clipping (PRC) of the errors.

Asymmetric codes live in [0, 255] with zero point z (real 0 is always a code, so zero padding is
exact); the kernels take signed bytes, so codes are stored shifted by -128 with the zero point
shifted alike: x ~= s * (q - z) holds for both.  The window sums of X that the zero-point
correction needs come from the same HVX call, as one extra all-ones output channel (one extra
column for the GEMM).

The softmax cross-entropy at the top is floating point in every mode.  Everything is
deterministic from the seed; batch ``b`` depends only on (seed, b) and the state after batch
b - 1, so a longer run's trace extends a shorter one's.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from isa.kernels import reference as ref
from isa.kernels.conv import conv2d_hvx
from isa.kernels.gemm import gemm_hvx
from socsim.workload.niti_train import (BATCH, CLASSES, INPUT_EXP, NOISE, _architecture, _batch,
                                        _maxpool_bwd, _templates, _xavier)

BITS = 8                # INT8 forward and backward (docs/seeds.md 5: Octo, USENIX ATC '21)
LAC_LAMBDA = 0.1        # L2 weight lambda of the LAC parameters mu, beta (docs/seeds.md 5: Octo)
PRC_COVERAGE = 0.95     # PRC tightens the clip to this interval of the errors (docs/seeds.md 5: Octo)
LR = 0.1                # SGD learning rate of weights and LAC parameters (ours: tiny-task choice)
K = 3                   # conv kernel size (as NITI's net), stride 1, pad 1


@dataclass(frozen=True)
class _Mode:
    """How one training mode computes its dot products."""

    forward: str        # "fp32" | "fake" (quantise-dequantise, float dot) | "int8" (HVX codes)
    backward: str       # "fp32" | "maxabs" (symmetric over max|e|) | "prc" (Octo's clipping)
    lac: bool           # loss-aware compensation layer after each conv


MODES = ("fp32", "fake-quant", "int8-no-lac", "octo")
_MODES = {
    "fp32": _Mode("fp32", "fp32", False),
    "fake-quant": _Mode("fake", "fp32", False),
    "int8-no-lac": _Mode("int8", "maxabs", False),
    "octo": _Mode("int8", "prc", True),
    # ablations: one of Octo's two fixes at a time
    "int8-prc": _Mode("int8", "prc", False),
    "int8-lac": _Mode("int8", "maxabs", True),
}
ABLATIONS = ("int8-prc", "int8-lac")


@dataclass(frozen=True)
class OctoRun:
    """Per-batch record of an Octo-family training run (arrays are read-only)."""

    mode: str
    loss: np.ndarray       # (batches,) cross-entropy of the batch, before its update
    accuracy: np.ndarray   # (batches,) fraction of the batch classified right, before its update
    alpha: np.ndarray      # (batches, convs) LAC alpha after the batch's update; (batches, 0) without LAC

    def summary(self, window: int = 50) -> dict[str, float]:
        """Compact result: mean loss of the first 20 batches, mean loss/accuracy of the last
        ``window`` batches, and the final LAC alphas."""
        late = slice(max(0, len(self.loss) - window), len(self.loss))
        return {"loss_first20": float(self.loss[:20].mean()),
                "loss_last": float(self.loss[late].mean()),
                "accuracy_last": float(self.accuracy[late].mean()),
                "alpha_final": [float(a) for a in self.alpha[-1]] if len(self.alpha) else []}


class Quantized(NamedTuple):
    """Integer codes with their scale and zero point: value = scale * (q - zero)."""

    q: np.ndarray
    scale: float
    zero: int

    def dequantize(self) -> np.ndarray:
        return self.scale * (self.q.astype(np.float64) - self.zero)


# ---- quantisers --------------------------------------------------------------------------------

def _round(v: np.ndarray, rng: np.random.Generator | None) -> np.ndarray:
    """Stochastic rounding (unbiased: E[round(v)] = v) with ``rng``; nearest without."""
    if rng is None:
        return np.rint(v)
    f = np.floor(v)
    return f + (rng.random(v.shape) < v - f)


def quantize_asym(x: np.ndarray, rng: np.random.Generator | None = None) -> Quantized:
    """Octo's forward quantiser: s = (max - min) / (2^8 - 1) over the range widened to contain 0,
    integer zero point z (so 0 is exact), codes in [0, 255]; stored as signed int8 (code - 128,
    zero point - 128) because the HVX kernels take signed bytes."""
    lo, hi = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    levels = 2 ** BITS - 1
    s = (hi - lo) / levels if hi > lo else 1.0
    z = int(round(-lo / s))
    u = np.clip(_round(x / s, rng) + z, 0, levels)
    half = 2 ** (BITS - 1)
    return Quantized((u - half).astype(np.int8), s, z - half)


def prc_clip(e: np.ndarray, coverage: float = PRC_COVERAGE) -> tuple[float, float]:
    """PRC clip interval of an error tensor.  Straddling 0: [-a, a], a = min(|min|, max);
    one-sided: [0, a] (or [-a, 0]), a = max(|min|, |max|); then a is tightened to the
    ``coverage`` quantile of |e| over the non-zero entries (the zeros that ReLU and max-pool
    masks leave are exact in any symmetric code and are not part of the distribution)."""
    nz = np.abs(e[e != 0])
    if nz.size == 0:
        return 0.0, 0.0
    mn, mx = float(e.min()), float(e.max())
    tight = float(np.quantile(nz, coverage))
    if mn < 0 < mx:
        a = min(-mn, mx, tight)
        return -a, a
    a = min(max(-mn, mx), tight)
    return (0.0, a) if mx > 0 else (-a, 0.0)


def quantize_sym(e: np.ndarray, rng: np.random.Generator | None = None,
                 prc: bool = True) -> Quantized:
    """Backward quantiser, zero point 0 so integer products dequantise by the scale product.
    With ``prc`` the interval is :func:`prc_clip`'s: [-a, a] -> [-127, 127], one-sided [0, a]
    -> [0, 255] (8-bit magnitude, known sign); without, [-max|e|, max|e|] -> [-127, 127]."""
    if prc:
        lo, hi = prc_clip(e)
    else:
        m = float(np.abs(e).max(initial=0.0))
        lo, hi = -m, m
    if hi == lo:
        return Quantized(np.zeros(e.shape, np.int16), 1.0, 0)
    half, full = 2 ** (BITS - 1) - 1, 2 ** BITS - 1
    if lo < 0 < hi:
        s, qlo, qhi = hi / half, -half, half
    elif hi > 0:
        s, qlo, qhi = hi / full, 0, full
    else:
        s, qlo, qhi = -lo / full, -full, 0
    q = np.clip(_round(np.clip(e, lo, hi) / s, rng), qlo, qhi)
    return Quantized(q.astype(np.int16), s, 0)


# ---- dot products ------------------------------------------------------------------------------

def _zero_point_fix(acc: np.ndarray, xsum: np.ndarray, wsum: np.ndarray, zx: int, zw: int,
                    k: int) -> np.ndarray:
    """sum (qx - zx)(qw - zw) from sum qx qw: minus zw * sum qx, minus zx * sum qw, plus
    k zx zw (k = terms per dot product).  Exact integer arithmetic."""
    return acc.astype(np.int64) - zw * xsum - zx * wsum + k * zx * zw


def conv_int8(xq: Quantized, wq: Quantized) -> np.ndarray:
    """Integer conv (stride 1, no pad: X comes pre-padded) of asymmetric codes on the HVX
    emulator: int64 sum (qx - zx)(qw - zw) per output.  An all-ones filter appended to W makes
    the kernel also return the window sums of qx that the zero-point correction needs."""
    cout, cin = wq.q.shape[:2]
    ones = np.ones((1, cin, K, K), np.int8)
    acc, _ = conv2d_hvx(xq.q, np.concatenate([wq.q, ones]), 1, 0)
    wsum = wq.q.reshape(cout, -1).astype(np.int64).sum(1)[None, :, None, None]
    return _zero_point_fix(acc[:, :cout], acc[:, cout:], wsum, xq.zero, wq.zero, cin * K * K)


def gemm_int8(xq: Quantized, wq: Quantized) -> np.ndarray:
    """Integer X @ W^T (X [N, K], W [out, K]) of asymmetric codes on the HVX emulator, with the
    row sums of qx from one extra all-ones column; int64 sum (qx - zx)(qw - zw)."""
    out, k = wq.q.shape
    b = np.concatenate([wq.q.T, np.ones((k, 1), np.int8)], axis=1)
    acc, _ = gemm_hvx(xq.q, np.ascontiguousarray(b))
    wsum = wq.q.astype(np.int64).sum(1)[None, :]
    return _zero_point_fix(acc[:, :out], acc[:, out:], wsum, xq.zero, wq.zero, k)


def _patches(xpad: np.ndarray) -> np.ndarray:
    return sliding_window_view(xpad, (K, K), axis=(2, 3))          # [N, C, H, W, K, K]


def _conv_f(xpad: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Floating-point conv, stride 1, on a pre-padded input."""
    return np.einsum("nchwij,ocij->nohw", _patches(xpad), w, optimize=True)


def _wgrad_f(xpad: np.ndarray, e: np.ndarray) -> np.ndarray:
    return np.einsum("nchwij,nohw->ocij", _patches(xpad), e, optimize=True)


def _dgrad_f(e: np.ndarray, w: np.ndarray, hw: tuple[int, int]) -> np.ndarray:
    """dX of the pre-padded input (the transposed conv), floating point."""
    n, _, oh, ow = e.shape
    out = np.zeros((n, w.shape[1]) + tuple(hw))
    for i in range(K):
        for j in range(K):
            out[:, :, i:i + oh, j:j + ow] += np.einsum("nohw,oc->nchw", e, w[:, :, i, j])
    return out


# ---- loss-aware compensation -------------------------------------------------------------------

def lac_forward(y: np.ndarray, alpha: float, mu: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """y + delta_hat, delta_hat = alpha * mu + beta (mu, beta shaped like one output sample)."""
    return y + (alpha * mu + beta)


def lac_backward(dout: np.ndarray, alpha: float, mu: np.ndarray, beta: np.ndarray,
                 lam: float = LAC_LAMBDA) -> tuple[float, np.ndarray, np.ndarray]:
    """(d_alpha, d_mu, d_beta) of the loss plus lam/2 (|mu|^2 + |beta|^2): d_alpha =
    sum(dout * mu), d_mu = alpha * dout + lam mu, d_beta = dout + lam beta (dout summed over
    the batch).  The error into y is dout itself."""
    g = dout.sum(axis=0)
    return float((g * mu).sum()), alpha * g + lam * mu, g + lam * beta


# ---- one layer, per mode -----------------------------------------------------------------------

def _conv_fwd(xpad: np.ndarray, w: np.ndarray, mode: _Mode, rng: np.random.Generator):
    """Forward conv of a pre-padded input; returns (y, what the backward needs)."""
    if mode.forward == "fp32":
        return _conv_f(xpad, w), (xpad, w)
    xq, wq = quantize_asym(xpad, rng), quantize_asym(w, rng)
    if mode.forward == "fake":
        xh, wh = xq.dequantize(), wq.dequantize()
        return _conv_f(xh, wh), (xh, wh)
    return xq.scale * wq.scale * conv_int8(xq, wq), (xq, wq)


def _conv_bwd(e: np.ndarray, saved, mode: _Mode, rng: np.random.Generator, need_dx: bool):
    """(dW, dX of the padded input or None) of a conv from its output error ``e``."""
    if mode.backward == "fp32":
        xpad, w = saved
        return _wgrad_f(xpad, e), _dgrad_f(e, w, xpad.shape[2:]) if need_dx else None
    xq, wq = saved
    eq = quantize_sym(e, rng, prc=mode.backward == "prc")
    dw = ref.conv2d_wgrad(xq.q, eq.q, K, K, 1, 0) \
        - xq.zero * eq.q.astype(np.int64).sum(axis=(0, 2, 3))[:, None, None, None]
    dw = eq.scale * xq.scale * dw
    if not need_dx:
        return dw, None
    hw = xq.q.shape[2:]
    esum = eq.q.astype(np.int64).sum(axis=1, keepdims=True)
    dx = ref.conv2d_dgrad(eq.q, wq.q, hw, 1, 0) \
        - wq.zero * ref.conv2d_dgrad(esum, np.ones((1, 1, K, K), np.int64), hw, 1, 0)
    return dw, eq.scale * wq.scale * dx


def _fc_fwd(x: np.ndarray, w: np.ndarray, mode: _Mode, rng: np.random.Generator):
    """Logits x @ w^T; returns (logits, what the backward needs)."""
    if mode.forward == "fp32":
        return x @ w.T, (x, w)
    xq, wq = quantize_asym(x, rng), quantize_asym(w, rng)
    if mode.forward == "fake":
        xh, wh = xq.dequantize(), wq.dequantize()
        return xh @ wh.T, (xh, wh)
    return xq.scale * wq.scale * gemm_int8(xq, wq), (xq, wq)


def _fc_bwd(e: np.ndarray, saved, mode: _Mode, rng: np.random.Generator):
    """(dW, dX) of the linear layer from the logits' error."""
    if mode.backward == "fp32":
        x, w = saved
        return e.T @ x, e @ w
    xq, wq = saved
    eq = quantize_sym(e, rng, prc=mode.backward == "prc")
    q = eq.q.astype(np.int64)
    dw = ref.gemm(q.T, xq.q) - xq.zero * q.sum(0)[:, None]
    dx = ref.gemm(q, wq.q) - wq.zero * q.sum(1)[:, None]
    return eq.scale * xq.scale * dw, eq.scale * wq.scale * dx


def _maxpool_f(x: np.ndarray) -> np.ndarray:
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def _pad(x: np.ndarray) -> np.ndarray:
    return np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))


# ---- training ----------------------------------------------------------------------------------

@lru_cache(maxsize=64)
def octo_train(batches: int, seed: int = 0, mode: str = "octo", layers: int = 3,
               noise: float = NOISE) -> OctoRun:
    """Train the tiny CNN for ``batches`` batches of 16 in ``mode`` (see the module docstring;
    also the ablations "int8-prc" and "int8-lac"); memoised.  ``layers`` and ``noise`` as
    :func:`socsim.workload.niti_train.niti_train`'s (noise: pixel std)."""
    if mode not in _MODES:
        raise ValueError(f"mode {mode!r}; known: {tuple(_MODES)}")
    if batches < 0 or layers < 2:
        raise ValueError(f"need batches >= 0 and layers >= 2, got {batches}, {layers}")
    m = _MODES[mode]
    templates = _templates(seed)
    arch, _ = _architecture(layers)
    ws = _xavier(seed, layers)
    convs, fc_w = ws[:-1], ws[-1]
    hw = [np.array([8, 8]) // 2 ** sum(p for _, _, p in arch[:i]) for i in range(len(arch))]
    lac = [[1.0, np.zeros((cout, *hw[i])), np.zeros((cout, *hw[i]))]
           for i, (_, cout, _) in enumerate(arch)] if m.lac else []
    loss, acc = np.zeros(batches), np.zeros(batches)
    alpha = np.zeros((batches, len(lac)))
    for b in range(batches):
        x8, labels = _batch(seed, b, templates, noise)
        x = x8.astype(np.float64) * 2.0 ** INPUT_EXP
        rng = np.random.default_rng([seed, b, 0x4F43544F])         # "OCTO"
        # forward: conv -> [LAC] -> ReLU -> max-pool
        saved = []
        for i, (w, (_, _, pool)) in enumerate(zip(convs, arch)):
            y, ctx = _conv_fwd(_pad(x), w, m, rng)
            if lac:
                y = lac_forward(y, *lac[i])
            r = np.maximum(y, 0.0)
            p = _maxpool_f(r) if pool else r
            saved.append((ctx, y, r, p))
            x = p
        flat = x.reshape(BATCH, -1)
        z, fc_ctx = _fc_fwd(flat, fc_w, m, rng)
        z = z - z.max(axis=1, keepdims=True)
        prob = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        loss[b] = -np.mean(np.log(prob[np.arange(BATCH), labels] + 1e-12))
        acc[b] = np.mean(z.argmax(axis=1) == labels)
        # backward
        g_fc, e = _fc_bwd((prob - np.eye(CLASSES)[labels]) / BATCH, fc_ctx, m, rng)
        e = e.reshape(x.shape)
        grads, lac_grads = [None] * len(convs), [None] * len(lac)
        for i in reversed(range(len(convs))):
            ctx, y, r, p = saved[i]
            e = _maxpool_bwd(e, r, p) if arch[i][2] else e
            e = np.where(y > 0, e, 0.0)
            if lac:
                lac_grads[i] = lac_backward(e, *lac[i])
            grads[i], dx = _conv_bwd(e, ctx, m, rng, need_dx=i > 0)
            if i:
                e = dx[:, :, 1:-1, 1:-1]
        # SGD on the FP32 masters and the LAC parameters
        fc_w = fc_w - LR * g_fc
        convs = [w - LR * g for w, g in zip(convs, grads)]
        for i, (da, dmu, dbeta) in enumerate(lac_grads):
            a, mu, beta = lac[i]
            lac[i] = [a - LR * da, mu - LR * dmu, beta - LR * dbeta]
            alpha[b, i] = lac[i][0]
    for arr in (loss, acc, alpha):
        arr.setflags(write=False)
    return OctoRun(mode, loss, acc, alpha)


def compare_modes(batches: int = 200, seed: int = 0, modes: tuple[str, ...] = MODES,
                  **kw) -> dict[str, dict[str, float]]:
    """:meth:`OctoRun.summary` of each mode on the same data and initial weights."""
    return {mode: octo_train(batches, seed, mode, **kw).summary() for mode in modes}
