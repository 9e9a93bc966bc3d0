"""Simulated cache line accesses per second through a 3-level hierarchy (L1D 64 KB / L2 512 KB /
L3 4 MB, the SD865 prime core's), on kernel streams from socsim.hw.cache.streams.

Run: python benchmarks/cache.py      (target: >= 50 M line accesses / s on the 2-core dev box)
"""
from __future__ import annotations

import time

import numpy as np

from socsim.hw.cache import streams as st
from socsim.hw.cache.geometry import CacheGeom
from socsim.hw.cache.hierarchy import Chain
from socsim.workload.ops import Op, make_params

GEOMS = (CacheGeom("L1D", 64 * 1024, 4, 64), CacheGeom("L2", 512 * 1024, 8, 64), CacheGeom("L3", 4 << 20, 16, 64))


def _stream(op, segments: int) -> tuple[np.ndarray, np.ndarray]:
    plan = st.cpu_conv_plan(op, 1) if op.kind in ("conv2d", "conv2d_wgrad", "gemm") else st.cpu_plane_plan(op, 1)
    parts = [plan.segment(k)[0] for k in range(min(segments, plan.n_segments))]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def bench(name: str, lines: np.ndarray, kinds: np.ndarray, repeat: int = 3) -> float:
    Chain(GEOMS, 64).feed(lines[:1000], kinds[:1000], emit=False)    # compile / warm
    best = 0.0
    for _ in range(repeat):
        c = Chain(GEOMS, 64)
        t = time.perf_counter()
        c.feed(lines, kinds, emit=False)
        dt = time.perf_counter() - t
        best = max(best, lines.size / dt)
    l1 = c.counters[0]
    print(f"{name:34s} {lines.size / 1e6:6.1f} M accesses  L1 hit {(l1[0] + l1[2]) / lines.size:5.1%}  "
          f"{best / 1e6:7.1f} M accesses/s")
    return best


def main() -> None:
    conv = Op("c", "conv2d", "forward", "l", "fp32", make_params(batch=8, cin=64, h=56, w=56, cout=64, kh=3, kw=3,
                                                                  stride=1, pad=1, groups=1, oh=56, ow=56))
    wgrad = Op("w", "conv2d_wgrad", "weight_grad", "l", "fp32", make_params(batch=8, cin=128, h=28, w=28, cout=128,
                                                                           kh=3, kw=3, stride=1, pad=1, groups=1,
                                                                           oh=28, ow=28))
    dw = Op("d", "dwconv2d", "forward", "l", "fp32", make_params(batch=8, cin=96, h=112, w=112, cout=96, kh=3,
                                                                  kw=3, stride=1, pad=1, groups=96, oh=112, ow=112))
    rates = [bench("conv 3x3 64->64 56x56 (im2col+GEMM)", *_stream(conv, 3000)),
             bench("conv weight gradient 128ch 28x28", *_stream(wgrad, 600)),
             bench("depthwise 3x3 96ch 112x112", *_stream(dw, 200))]
    rng = np.random.default_rng(0)
    bench("random lines in 2 MB (worst case)", rng.integers(0, 32768, 10_000_000).astype(np.int64),
          np.zeros(10_000_000, np.uint8))
    print(f"kernel streams, geometric mean: {np.exp(np.mean(np.log(rates))) / 1e6:.1f} M line accesses/s")


if __name__ == "__main__":
    main()
