"""The modal recursion of the thermal network over consecutive steps, in numba, beside its
plain-numpy reference (tests check one against the other).

z[k] = decay[k] * z[k-1] + drive[k], element-wise per mode, z[-1] = z0.
"""
from __future__ import annotations

import numpy as np
from numba import njit


def modal_scan_ref(z0: np.ndarray, decay: np.ndarray, drive: np.ndarray) -> np.ndarray:
    out = np.empty_like(drive)
    z = z0.astype(float).copy()
    for k in range(drive.shape[0]):
        z = decay[k] * z + drive[k]
        out[k] = z
    return out


@njit(cache=True, fastmath=False)
def modal_scan(z0: np.ndarray, decay: np.ndarray, drive: np.ndarray) -> np.ndarray:
    n, m = drive.shape
    out = np.empty((n, m))
    z = z0.copy()
    for k in range(n):
        for j in range(m):
            z[j] = decay[k, j] * z[j] + drive[k, j]
            out[k, j] = z[j]
    return out
