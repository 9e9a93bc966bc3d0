"""NITI integer training run for real on the emulated HVX kernels, on small synthetic data.

docs/seeds.md 1 ("the INT8 algorithms also run for real on the emulated HVX kernels, on small data, so
that scale-factor dynamics and accuracy come from actual training").  A tiny CNN (convs of 3x3
with ReLU and 2x2 max-pool, then one linear layer) classifies 4-class Gaussian-blob images
1x8x8.  Every forward conv/GEMM runs on the HVX emulator (:func:`isa.kernels.conv.conv2d_hvx`,
:func:`isa.kernels.gemm.gemm_hvx`) with int32 accumulation; NITI's dynamic rescale then picks
the shift as (bit width of max|acc|) - 7 (= 32 - clz - 7) and requantises int32 -> int8.
Error and weight gradients use the numpy integer references of the same kernels
(:mod:`isa.kernels.reference`), each rescaled to int8 the same way; the weight update shifts the
int32 weight gradient to ``update_bits`` bits with seeded stochastic rounding and applies it to
the int8 weights (Wang et al., "NITI", TPAMI 2022).  Only the softmax cross-entropy at the top is
computed in floating point (on the int8 logits times their power-of-two scale), as NITI's loss
is not part of the HVX graph either.

Everything is deterministic from the seed; batch ``b`` depends only on (seed, b) and the state
after batch b - 1, so a longer run's trace extends a shorter one's.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from isa.kernels import reference as ref
from isa.kernels.conv import conv2d_hvx
from isa.kernels.gemm import gemm_hvx

# The task is synthetic, chosen (not measured) for a small, fast, deterministic NITI run that
# yields a real scale-change trace for Mandheling's adaptive rescale (scale_source="niti-train",
# docs/seeds.md 1); none of these values comes from a paper.  CLASSES, IMAGE_HW, BATCH: assumption,
# a small setting that trains a few conv layers on the emulated kernels quickly (BATCH 16, the
# mini-batch of Swan and Min-Energy);
# INPUT_EXP -6: 6 fractional bits give int8 a range of -2..2, the unit blob height plus about
# one noise std (larger values clip); UPDATE_BITS 2: assumption, a small NITI update (NITI
# tunes it per task, as a learning rate); NOISE 0.8 and the blobs' width (sigma 1.5 pixels in
# _templates): assumption, meant to keep the task from being solved in the first few batches.
CLASSES = 4
IMAGE_HW = 8
BATCH = 16
INPUT_EXP = -6          # input int8 = round(x * 2**6)
UPDATE_BITS = 2         # NITI's "learning rate": weight gradient rescaled to this many bits
NOISE = 0.8             # pixel noise (std) on the unit-height blobs


@dataclass(frozen=True)
class NitiRun:
    """Per-batch record of a NITI training run (arrays are read-only)."""

    shifts: np.ndarray     # (batches, layers) int: shift each layer's forward rescale picked
    loss: np.ndarray       # (batches,) cross-entropy of the batch, before its update
    accuracy: np.ndarray   # (batches,) fraction of the batch classified right, before its update


def _templates(seed: int) -> np.ndarray:
    """One Gaussian blob per class, centred at a seeded spot of the 8x8 image."""
    rng = np.random.default_rng([seed, 0x4E495449])   # "NITI"
    yy, xx = np.mgrid[0:IMAGE_HW, 0:IMAGE_HW]
    quads = [(2, 2), (2, 5), (5, 2), (5, 5)]
    out = np.empty((CLASSES, IMAGE_HW, IMAGE_HW))
    for c in range(CLASSES):
        cy, cx = np.array(quads[c % 4]) + rng.uniform(-0.5, 0.5, 2)
        # sigma 1.5 pixels: synthetic-task assumption (module constants note)
        out[c] = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * 1.5 ** 2))
    return out


def _batch(seed: int, b: int, templates: np.ndarray,
           noise: float = NOISE) -> tuple[np.ndarray, np.ndarray]:
    """Batch ``b``: int8 images [BATCH, 1, 8, 8] (blob + Gaussian noise) and labels."""
    rng = np.random.default_rng([seed, b, 1])
    labels = rng.integers(0, CLASSES, BATCH)
    x = templates[labels] + rng.normal(0.0, noise, (BATCH, IMAGE_HW, IMAGE_HW))
    x8 = np.clip(np.round(x * 2.0 ** -INPUT_EXP), -128, 127).astype(np.int8)
    return x8[:, None], labels


def _architecture(layers: int) -> tuple[list[tuple[int, int, bool]], int]:
    """(cin, cout, pool) of each conv and the linear layer's input width."""
    convs, cin, hw = [], 1, IMAGE_HW
    for i in range(layers - 1):
        cout = 8 if i == 0 else 16
        pool = hw > 2
        convs.append((cin, cout, pool))
        cin, hw = cout, hw // 2 if pool else hw
    return convs, cin * hw * hw


def _xavier(seed: int, layers: int) -> list[np.ndarray]:
    """Xavier-normal float weights of every conv, then the linear layer (shared with Octo)."""
    rng = np.random.default_rng([seed, 2])
    convs, fc_in = _architecture(layers)
    shapes = [(cout, cin, 3, 3) for cin, cout, _ in convs] + [(CLASSES, fc_in)]
    ws = []
    for shape in shapes:
        fan_in = int(np.prod(shape[1:]))
        fan_out = shape[0] * int(np.prod(shape[2:]))
        ws.append(rng.normal(0.0, np.sqrt(2.0 / (fan_in + fan_out)), shape))
    return ws


def _init_weights(seed: int, layers: int) -> tuple[list[np.ndarray], np.ndarray, list[int]]:
    """Xavier-normal weights quantised to int8 with a per-layer power-of-two exponent."""
    ws, exps = [], []
    for w in _xavier(seed, layers):
        e = int(np.floor(np.log2(np.abs(w).max()))) - 6     # max|w| uses 7 bits
        ws.append(np.clip(np.round(w / 2.0 ** e), -127, 127).astype(np.int8))
        exps.append(e)
    return ws[:-1], ws[-1], exps


def _rescale(acc: np.ndarray) -> tuple[np.ndarray, int]:
    """NITI dynamic rescale: shift = 32 - clz(max|acc|) - 7, then int32 -> int8."""
    return ref.requant_dynamic(acc)[0], ref.niti_shift(acc)


def _update(w: np.ndarray, grad: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """int8 weight update: the int32 gradient shifted to UPDATE_BITS bits (stochastic rounding)."""
    g = grad.astype(np.int64)
    shift = max(0, int(np.abs(g).max(initial=0)).bit_length() - UPDATE_BITS)
    q = g >> shift                                   # floor
    frac = (g - (q << shift)) / float(1 << shift)
    q = q + (rng.random(g.shape) < frac)
    return np.clip(w.astype(np.int64) - q, -127, 127).astype(np.int8)


def _maxpool_bwd(err: np.ndarray, y: np.ndarray, pooled: np.ndarray) -> np.ndarray:
    """Route each pooled error to the (first) arg-max of its 2x2 window (int64 for integer
    errors, float64 for float ones)."""
    out = np.zeros(y.shape, np.result_type(err.dtype, np.int64))
    taken = np.zeros(pooled.shape, bool)
    for i in range(2):
        for j in range(2):
            hit = (y[:, :, i::2, j::2] == pooled) & ~taken
            out[:, :, i::2, j::2] = np.where(hit, err, 0)
            taken |= hit
    return out


@lru_cache(maxsize=32)
def niti_train(batches: int, seed: int = 0, layers: int = 3) -> NitiRun:
    """Train the tiny CNN for ``batches`` batches of 16 with NITI; memoised."""
    if batches < 0 or layers < 2:
        raise ValueError(f"need batches >= 0 and layers >= 2, got {batches}, {layers}")
    templates = _templates(seed)
    convs, fc_w, w_exps = _init_weights(seed, layers)
    arch, _ = _architecture(layers)
    shifts = np.zeros((batches, layers), np.int64)
    loss = np.zeros(batches)
    acc = np.zeros(batches)
    for b in range(batches):
        x, labels = _batch(seed, b, templates)
        rng = np.random.default_rng([seed, b, 3])
        # forward: int8 conv on HVX -> dynamic rescale -> ReLU -> max-pool
        saved, exp = [], INPUT_EXP
        for i, (w, (_, _, pool)) in enumerate(zip(convs, arch)):
            a32, _ = conv2d_hvx(x, w, 1, 1)
            y, s = _rescale(a32)
            shifts[b, i] = s
            exp += w_exps[i] + s
            y = ref.relu(y)
            p = ref.maxpool(y, 2, 2) if pool else y
            saved.append((x, y, p))
            x = p
        flat = x.reshape(BATCH, -1)
        o32, _ = gemm_hvx(flat, np.ascontiguousarray(fc_w.T))
        out, s = _rescale(o32)
        shifts[b, -1] = s
        exp += w_exps[-1] + s
        # loss (floating point, on the int8 logits at their power-of-two scale)
        z = out.astype(np.float64) * 2.0 ** exp
        z -= z.max(axis=1, keepdims=True)
        prob = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        loss[b] = -np.mean(np.log(prob[np.arange(BATCH), labels] + 1e-12))
        acc[b] = np.mean(out.argmax(axis=1) == labels)
        onehot = np.eye(CLASSES)[labels]
        err, _ = _rescale(np.round((prob - onehot) * 2 ** 14).astype(np.int64))
        # backward: integer error / weight gradients, each error rescaled to int8
        g_fc = ref.gemm(err.T, flat)                     # [classes, fc_in] int32
        e, _ = _rescale(ref.gemm(err, fc_w))
        e = e.reshape(x.shape)
        grads = [None] * len(convs)
        for i in reversed(range(len(convs))):
            xin, y, p = saved[i]
            e32 = _maxpool_bwd(e, y, p) if arch[i][2] else e.astype(np.int64)
            e32 = np.where(y > 0, e32, 0)
            e8, _ = _rescale(e32)
            grads[i] = ref.conv2d_wgrad(xin, e8, 3, 3, 1, 1)
            if i:
                e, _ = _rescale(ref.conv2d_dgrad(e8, convs[i], xin.shape[2:], 1, 1))
        fc_w = _update(fc_w, g_fc, rng)
        convs = [_update(w, g, rng) for w, g in zip(convs, grads)]
    for a in (shifts, loss, acc):
        a.setflags(write=False)
    return NitiRun(shifts, loss, acc)


def niti_scale_trace(batches: int, seed: int = 0, layers: int = 3) -> np.ndarray:
    """(batches, layers) forward rescale shifts of a real NITI run (see :func:`niti_train`)."""
    return niti_train(batches, seed, layers).shifts


def change_rate(shifts: np.ndarray) -> float:
    """Fraction of batch-to-batch transitions in which some layer's shift changed."""
    if len(shifts) < 2:
        return 0.0
    return float(np.mean(np.any(np.diff(shifts, axis=0) != 0, axis=1)))
