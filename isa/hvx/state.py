"""Architectural state of one HVX context, replicated over a leading tile axis.

Every array has the tile count first, so one program runs over many independent tiles at once:
``V`` [tiles, 32, 128] vector registers (pairs are adjacent even/odd registers), ``Q``
[tiles, 4, 128] predicate bits (one per vector byte), ``R`` [tiles, 32] scalar registers
(int64 holding 32-bit values) and ``mem`` [tiles, bytes] each tile's private memory image.

``share`` backs a read-only byte range of every tile's address space with one of a few shared
images instead of per-tile copies (a DMA engine broadcasting a weight or B panel to many tiles):
loads there read ``images[group[tile]]`` and stores there fault.  Up to ``MAX_SHARED`` ranges
(a GEMM shares its A row blocks and its B panels).

The register file, the memory images and the shared images start on a 128-byte boundary (numpy
aligns large arrays to 16 bytes only): the compiled regions (isa.hvx.superblock) move vectors as
64-byte host words, and a word that straddles two cache lines costs a split load or store, and
defeats store-to-load forwarding when an accumulator written by one instruction is read by the
next vrmpy on it.  In the 512x1024x1024 GEMM benchmark that was ~40% of the region's time
(docs/performance.md).
"""
from __future__ import annotations

import numpy as np


ALIGN = 128   # bytes: one HVX vector, two host cache lines


def aligned_zeros(shape, dtype=np.uint8) -> np.ndarray:
    """np.zeros(shape, dtype), C-contiguous, its data starting on an ALIGN-byte boundary."""
    n = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    raw = np.zeros(n + ALIGN, np.uint8)
    off = (-raw.ctypes.data) % ALIGN
    return raw[off:off + n].view(dtype).reshape(shape)


def _aligned(a: np.ndarray) -> np.ndarray:
    """``a`` itself when C-contiguous and aligned, else an aligned copy."""
    if a.flags.c_contiguous and a.ctypes.data % ALIGN == 0:
        return a
    out = aligned_zeros(a.shape, a.dtype)
    out[...] = a
    return out


MAX_SHARED = 2   # shared ranges per state (the compiled regions take a fixed number)


class HvxState:
    def __init__(self, tiles: int, mem_bytes: int):
        self.tiles = int(tiles)
        self.V = aligned_zeros((tiles, 32, 128))
        self.Q = np.zeros((tiles, 4, 128), np.bool_)
        self.R = np.zeros((tiles, 32), np.int64)
        self.mem = aligned_zeros((tiles, mem_bytes))
        self.shares: list = []   # (offset, images [G, n] uint8, group [tiles] int64), by offset

    def share(self, offset: int, images: np.ndarray, group: np.ndarray) -> None:
        """Back bytes [offset, offset + images.shape[1]) of every tile by ``images[group[t]]``
        (read-only).  A range that overlaps one shared before replaces it; at most MAX_SHARED
        ranges.  A range may lie past the private memory, which then need not reserve its bytes."""
        images = _aligned(np.ascontiguousarray(images).reshape(len(images), -1).view(np.uint8))
        group = np.asarray(group, np.int64).reshape(self.tiles)
        if offset < 0:
            raise ValueError("negative shared offset")
        if group.min(initial=0) < 0 or group.max(initial=0) >= len(images):
            raise ValueError("shared image index out of range")
        end = offset + images.shape[1]
        keep = [r for r in self.shares if r[0] >= end or r[0] + r[1].shape[1] <= offset]
        if len(keep) >= MAX_SHARED:
            raise ValueError(f"more than {MAX_SHARED} shared ranges")
        self.shares = sorted(keep + [(int(offset), images, group)], key=lambda r: r[0])

    @property
    def address_bytes(self) -> int:
        """Size of each tile's address space: private memory plus the shared ranges."""
        return max([self.mem.shape[1]] + [o + d.shape[1] for o, d, _ in self.shares])

    def vreg(self, n: int) -> np.ndarray:
        return self.V[:, n]

    def write(self, offset: int, data: np.ndarray) -> None:
        """Copy per-tile bytes [tiles, nbytes] (or any array viewed as bytes) into memory."""
        d = np.ascontiguousarray(data).reshape(self.tiles, -1).view(np.uint8)
        self.mem[:, offset:offset + d.shape[1]] = d

    def read(self, offset: int, nbytes: int, dtype=np.uint8) -> np.ndarray:
        return np.ascontiguousarray(self.mem[:, offset:offset + nbytes]).view(dtype)
