"""Set-associative cache simulation on line-granularity access streams (numba, with a twin).

geometry   CacheGeom, stream kinds (READ / WRITE / WRITE_FULL), counter columns
sim_numba  the compiled chain simulator (sim_lru_wb: its all-LRU write-back fast path);
           sim_ref their plain-Python twin
hierarchy  Chain, Hierarchy (private chains per thread -> shared chain -> DRAM, VTCM scratch);
           hier_numba its compiled multi-step driver
streams    the kernels' access plans (StreamPlan), CPU (MNN-style) and DSP (HVX);
           streams_numba the compiled generators, streams_ref their numpy twin
"""
from socsim.hw.cache.geometry import READ, WRITE, WRITE_FULL, CacheGeom
from socsim.hw.cache.hierarchy import Chain, Hierarchy, LevelStats

__all__ = ["READ", "WRITE", "WRITE_FULL", "CacheGeom", "Chain", "Hierarchy", "LevelStats"]
