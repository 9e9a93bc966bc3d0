"""Plain-Python reference twin of :mod:`socsim.hw.cache.sim_numba` (same semantics, no numba).

Written recursively and per set, the way one would explain a cache on a whiteboard, so the
property tests compare two differently structured implementations of the same rules.
"""
from __future__ import annotations

import numpy as np

from socsim.hw.cache.geometry import FILLS, RD_HIT, RD_MISS, WR_HIT, WR_MISS, WRITEBACKS

_MASK = (1 << 64) - 1


class _Level:
    def __init__(self, sets, assoc, shift, policy, wb):
        self.sets, self.assoc, self.shift, self.policy, self.wb = int(sets), int(assoc), int(shift), int(policy), bool(wb)
        self.tags = [[-1] * self.assoc for _ in range(self.sets)]
        self.stamp = [[0] * self.assoc for _ in range(self.sets)]
        self.dirty = [[False] * self.assoc for _ in range(self.sets)]
        self.plru = [0] * self.sets
        self.clock = 0

    def touch_plru(self, s, way):
        bits, node, half, lo = self.plru[s], 1, self.assoc >> 1, 0
        while half >= 1:
            right = way >= lo + half
            if right:
                bits &= ~(1 << node)
                lo += half
            else:
                bits |= 1 << node
            node = 2 * node + int(right)
            half >>= 1
        self.plru[s] = bits

    def victim_plru(self, s):
        bits, node, half, way = self.plru[s], 1, self.assoc >> 1, 0
        while half >= 1:
            right = (bits >> node) & 1
            way += half if right else 0
            node = 2 * node + right
            half >>= 1
        return way


class RefChain:
    """A chain of levels; ``access`` returns nothing, traffic leaving the chain goes to ``out``."""

    def __init__(self, sets, assoc, shift, policy, wb, rng_seed):
        self.levels = [_Level(*a) for a in zip(sets, assoc, shift, policy, wb)]
        self.counters = np.zeros((len(self.levels), 6), dtype=np.int64)
        self.rng = int(rng_seed)
        self.out: list[tuple[int, int]] = []

    def _rand(self) -> int:
        x = self.rng
        x ^= (x << 13) & _MASK
        x ^= x >> 7
        x ^= (x << 17) & _MASK
        self.rng = x
        return x

    def access(self, lev: int, addr: int, kind: int) -> None:
        if lev == len(self.levels):
            self.out.append((addr, kind))
            return
        L = self.levels[lev]
        la = addr >> L.shift
        s = la % L.sets
        ways = L.tags[s]
        is_write = kind != 0
        if la in ways:
            w = ways.index(la)
            self.counters[lev, WR_HIT if is_write else RD_HIT] += 1
            if L.policy == 0:
                L.clock += 1
                L.stamp[s][w] = L.clock
            elif L.policy == 3:
                L.touch_plru(s, w)
            if is_write:
                if L.wb:
                    L.dirty[s][w] = True
                else:
                    self.access(lev + 1, addr, kind)
            return
        self.counters[lev, WR_MISS if is_write else RD_MISS] += 1
        if is_write and not L.wb:
            self.access(lev + 1, addr, kind)
            return
        if -1 in ways:
            victim = ways.index(-1)
        elif L.policy in (0, 1):
            victim = min(range(L.assoc), key=lambda w: (L.stamp[s][w], w))
        elif L.policy == 2:
            victim = self._rand() % L.assoc
        else:
            victim = L.victim_plru(s)
        old = ways[victim]
        if old != -1 and L.dirty[s][victim]:
            self.counters[lev, WRITEBACKS] += 1
            self.access(lev + 1, old << L.shift, 2)
        if kind != 2:
            self.counters[lev, FILLS] += 1
            self.access(lev + 1, addr, 0)
        ways[victim] = la
        L.dirty[s][victim] = is_write and L.wb
        if L.policy in (0, 1):
            L.clock += 1
            L.stamp[s][victim] = L.clock
        elif L.policy == 3:
            L.touch_plru(s, victim)


def run_chain(lines, kinds, sets, assoc, shift, policy, wb, rng_seed):
    """Reference simulation; returns (counters, out_lines, out_kinds)."""
    chain = RefChain(sets, assoc, shift, policy, wb, rng_seed)
    for a, k in zip(lines.tolist(), kinds.tolist()):
        chain.access(0, a, k)
    out = np.array([a for a, _ in chain.out], dtype=np.int64)
    kinds_out = np.array([k for _, k in chain.out], dtype=np.uint8)
    return chain.counters, out, kinds_out
