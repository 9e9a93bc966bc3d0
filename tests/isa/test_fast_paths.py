"""The numba hot paths agree bit for bit with their plain-numpy twins."""
import numpy as np
import pytest

import isa.hvx as hvx
from isa.hvx import fast
from isa.kernels import gemm


@pytest.mark.parametrize("tiles", [1, 3, 40])
def test_vrmpybus_numba_matches_numpy(tiles):
    rng = np.random.default_rng(tiles)
    u = rng.integers(0, 256, (tiles, 128), dtype=np.uint8)
    x = rng.integers(0, 256, (tiles, 128), dtype=np.uint8)
    rt = rng.integers(-2 ** 31, 2 ** 31, tiles)
    rt[0] = -2 ** 31
    assert (fast.vrmpybus(u, rt) == fast.vrmpybus_ref(u, rt)).all()
    assert (fast.vrmpybus_acc(x, u, rt) == fast.vrmpybus_acc_ref(x, u, rt)).all()
    regs = np.zeros((tiles, 32), np.int64)
    regs[:, 7] = rt
    v = np.zeros((tiles, 32, 128), np.uint8)
    v[:, 2], v[:, 5] = x, u
    fast.vrmpybus_acc_inplace(v, v.view(np.uint32), 2, 5, regs, 7)
    assert (v[:, 2] == fast.vrmpybus_acc_ref(x, u, rt)).all()


def test_compiled_loops_match_reference_path():
    """A GEMM run with compiled loops (superblocks) equals the per-instruction numpy run."""
    rng = np.random.default_rng(5)
    prog = gemm.build_gemm_tile(72)
    a = hvx.HvxState(6, prog.mem_bytes)
    a.mem[:] = rng.integers(0, 256, a.mem.shape, dtype=np.uint8)
    b = hvx.HvxState(6, prog.mem_bytes)
    b.mem[:] = a.mem
    hvx.run(prog, a, fast=True)
    hvx.run(prog, b, fast=False)
    assert (a.V == b.V).all() and (a.R == b.R).all() and (a.mem == b.mem).all()
