"""Architectural state of one HVX context, replicated over a leading tile axis.

Every array has the tile count first, so one program runs over many independent tiles at once:
``V`` [tiles, 32, 128] vector registers (pairs are adjacent even/odd registers), ``Q``
[tiles, 4, 128] predicate bits (one per vector byte), ``R`` [tiles, 32] scalar registers
(int64 holding 32-bit values) and ``mem`` [tiles, bytes] each tile's private memory image.
"""
from __future__ import annotations

import numpy as np


class HvxState:
    def __init__(self, tiles: int, mem_bytes: int):
        self.tiles = int(tiles)
        self.V = np.zeros((tiles, 32, 128), np.uint8)
        self.Q = np.zeros((tiles, 4, 128), np.bool_)
        self.R = np.zeros((tiles, 32), np.int64)
        self.mem = np.zeros((tiles, mem_bytes), np.uint8)

    def vreg(self, n: int) -> np.ndarray:
        return self.V[:, n]

    def write(self, offset: int, data: np.ndarray) -> None:
        """Copy per-tile bytes [tiles, nbytes] (or any array viewed as bytes) into memory."""
        d = np.ascontiguousarray(data).reshape(self.tiles, -1).view(np.uint8)
        self.mem[:, offset:offset + d.shape[1]] = d

    def read(self, offset: int, nbytes: int, dtype=np.uint8) -> np.ndarray:
        return np.ascontiguousarray(self.mem[:, offset:offset + nbytes]).view(dtype)
