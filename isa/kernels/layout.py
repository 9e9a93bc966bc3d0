"""Host-side data layout for the spatial kernels (what a DSP runtime does when it DMAs tiles).

Spatial kernels compute on the padded input width: output position n = oh * row + ow covers
ow in [0, row) although only ow < OW is valid, so every tap is one contiguous (unaligned) vector
load at n + shift(tap).  Stride-2 kernels first split the padded input into four phase planes
(even/odd rows x even/odd columns, done on HVX by ``build_phase_split``), turning them into
stride-1 accesses on the planes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def rup(x: int, m: int) -> int:
    return -(-x // m) * m


@dataclass(frozen=True)
class Geometry:
    h: int
    w: int
    kh: int
    kw: int
    stride: int
    pad: int

    @property
    def hp(self) -> int:
        return rup(self.h + 2 * self.pad, 2)  # even, so row pairs split cleanly

    @property
    def wp(self) -> int:
        return self.w + 2 * self.pad

    @property
    def oh(self) -> int:
        return (self.h + 2 * self.pad - self.kh) // self.stride + 1

    @property
    def ow(self) -> int:
        return (self.w + 2 * self.pad - self.kw) // self.stride + 1

    @property
    def nphase(self) -> int:
        return 1 if self.stride == 1 else 4

    @property
    def row(self) -> int:
        """Row pitch of the plane the taps read (padded width, or phase-plane width)."""
        return self.wp if self.stride == 1 else rup(self.wp, 2) // 2

    @property
    def prow(self) -> int:
        """Rows of the plane the taps read."""
        return self.hp if self.stride == 1 else self.hp // 2

    def taps(self) -> list:
        """(phase index, shift) per tap (kh, kw) in row-major order."""
        out = []
        for i in range(self.kh):
            for j in range(self.kw):
                if self.stride == 1:
                    out.append((0, i * self.row + j))
                else:
                    out.append(((i % 2) * 2 + (j % 2), (i // 2) * self.row + j // 2))
        return out

    @property
    def max_shift(self) -> int:
        return max(s for _, s in self.taps())

    @property
    def npos(self) -> int:
        return self.oh * self.row

    @property
    def ntiles(self) -> int:
        """128-position tiles per image and channel."""
        return -(-self.npos // 128)

    @property
    def window(self) -> int:
        """Bytes of one plane a 128-position tile reads."""
        return rup(128 + self.max_shift, 128)

    @property
    def plane_len(self) -> int:
        """Length a plane is padded to so every tile window is in range."""
        return rup(max(self.prow * self.row, (self.ntiles - 1) * 128 + self.window), 128)


def pad_planes(x: np.ndarray, g: Geometry) -> np.ndarray:
    """[N, C, H, W] int8 -> zero-padded [N, C, hp, wp] (the layout the previous layer writes)."""
    n, c = x.shape[:2]
    xp = np.zeros((n, c, g.hp, g.wp), np.int8)
    xp[:, :, g.pad:g.pad + g.h, g.pad:g.pad + g.w] = x
    return xp


def phase_planes_ref(xp: np.ndarray, g: Geometry) -> np.ndarray:
    """Reference of the HVX phase split: [N, C, hp, wp] -> [N, C, 4, hp/2, row]."""
    n, c = xp.shape[:2]
    wpe = rup(g.wp, 2)
    x2 = np.zeros((n, c, g.hp, wpe), np.int8)
    x2[..., :g.wp] = xp
    return np.stack([x2[:, :, a::2, b::2] for a in (0, 1) for b in (0, 1)], axis=2)


def tap_planes(x: np.ndarray, g: Geometry, phases: np.ndarray = None) -> np.ndarray:
    """Planes the taps read, flattened and padded: [N, C, nphase, plane_len] int8."""
    if g.stride == 1:
        p = pad_planes(x, g)[:, :, None]
    else:
        p = phases
    n, c, nph = p.shape[:3]
    flat = np.zeros((n, c, nph, g.plane_len), np.int8)
    m = p.shape[3] * p.shape[4]
    flat[..., :m] = p.reshape(n, c, nph, m)
    return flat


def tile_windows(planes: np.ndarray, g: Geometry) -> np.ndarray:
    """[N, C, nphase, plane_len] -> per-tile windows [N * ntiles, C, nphase, window]."""
    n = planes.shape[0]
    wins = np.stack([planes[..., t * 128:t * 128 + g.window] for t in range(g.ntiles)], axis=1)
    return wins.reshape(n * g.ntiles, *wins.shape[2:])


def untile_outputs(c: np.ndarray, g: Geometry, n: int) -> np.ndarray:
    """Per-tile outputs [N * ntiles, ch, 128] -> [N, ch, OH, OW] (dropping padded-width columns)."""
    ch = c.shape[1]
    full = c.reshape(n, g.ntiles, ch, 128).transpose(0, 2, 1, 3).reshape(n, ch, g.ntiles * 128)
    return full[:, :, :g.npos].reshape(n, ch, g.oh, g.row)[..., :g.ow]
