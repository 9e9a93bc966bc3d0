"""Cross-check the CPU core model's inner-loop cycles against llvm-mca (docs/oracles.md section 2)."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from socsim.hw.cpu import GEMM_MIX, GEMM_MIX_INT8, unit_cycles
from socsim.spec import load_soc

pytestmark = pytest.mark.oracle
MCA = shutil.which("llvm-mca") or shutil.which("llvm-mca-14")

# MNN-style 12x8 FP32 micro-kernel k step (24 FMLA by element, 5 LDR q) and an 8x8 INT8 SDOT
# tile k step (16 SDOT by element, 4 LDR q).
GEMM_FP32_12x8 = """\
# MNN-style 12x8 FP32 GEMM micro-kernel, one k step: 24 FMLA, 5 loads
ldr q0, [x1], #16
ldr q1, [x1], #16
ldr q2, [x1], #16
ldr q3, [x2], #16
ldr q4, [x2], #16
fmla v8.4s, v3.4s, v0.s[0]
fmla v9.4s, v4.4s, v0.s[0]
fmla v10.4s, v3.4s, v0.s[1]
fmla v11.4s, v4.4s, v0.s[1]
fmla v12.4s, v3.4s, v0.s[2]
fmla v13.4s, v4.4s, v0.s[2]
fmla v14.4s, v3.4s, v0.s[3]
fmla v15.4s, v4.4s, v0.s[3]
fmla v16.4s, v3.4s, v1.s[0]
fmla v17.4s, v4.4s, v1.s[0]
fmla v18.4s, v3.4s, v1.s[1]
fmla v19.4s, v4.4s, v1.s[1]
fmla v20.4s, v3.4s, v1.s[2]
fmla v21.4s, v4.4s, v1.s[2]
fmla v22.4s, v3.4s, v1.s[3]
fmla v23.4s, v4.4s, v1.s[3]
fmla v24.4s, v3.4s, v2.s[0]
fmla v25.4s, v4.4s, v2.s[0]
fmla v26.4s, v3.4s, v2.s[1]
fmla v27.4s, v4.4s, v2.s[1]
fmla v28.4s, v3.4s, v2.s[2]
fmla v29.4s, v4.4s, v2.s[2]
fmla v30.4s, v3.4s, v2.s[3]
fmla v31.4s, v4.4s, v2.s[3]
subs x3, x3, #1
"""
GEMM_INT8_SDOT_8x8 = """\
ldr q0, [x1], #16
ldr q1, [x1], #16
ldr q2, [x2], #16
ldr q3, [x2], #16
sdot v8.4s, v2.16b, v0.4b[0]
sdot v9.4s, v3.16b, v0.4b[0]
sdot v10.4s, v2.16b, v0.4b[1]
sdot v11.4s, v3.16b, v0.4b[1]
sdot v12.4s, v2.16b, v0.4b[2]
sdot v13.4s, v3.16b, v0.4b[2]
sdot v14.4s, v2.16b, v0.4b[3]
sdot v15.4s, v3.16b, v0.4b[3]
sdot v16.4s, v2.16b, v1.4b[0]
sdot v17.4s, v3.16b, v1.4b[0]
sdot v18.4s, v2.16b, v1.4b[1]
sdot v19.4s, v3.16b, v1.4b[1]
sdot v20.4s, v2.16b, v1.4b[2]
sdot v21.4s, v3.16b, v1.4b[2]
sdot v22.4s, v2.16b, v1.4b[3]
sdot v23.4s, v3.16b, v1.4b[3]
subs x3, x3, #1
"""
LOOPS = {"gemm_fp32_12x8": (GEMM_FP32_12x8, GEMM_MIX, 24), "gemm_int8_sdot_8x8": (GEMM_INT8_SDOT_8x8, GEMM_MIX_INT8, 16)}
# Known model gaps, so the bound is a band rather than equality: LLVM 14's cortex-a77/x1 model
# (borrowed from an older core) issues FMLA-by-element on one pipe where Arm's Cortex-A77
# Software Optimization Guide lists two (V0/V1), so llvm-mca reports up to 2x our cycles there;
# on the in-order A55 llvm-mca charges 128-bit loads against the NEON pipe (+20-45%).
BAND = (0.8, 2.1)


def _mca_cycles(cpu: str, path: Path, iters: int = 200) -> float:
    out = subprocess.run([MCA, "-mtriple=aarch64", f"-mcpu={cpu}", "-mattr=+dotprod", f"-iterations={iters}",
                          str(path)], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"Total Cycles:\s+(\d+)", out).group(1)) / iters


@pytest.mark.parametrize("cpu,cluster", [("cortex-a55", "little"), ("cortex-a77", "mid"), ("cortex-x1", "prime")])
@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_inner_loop_cycles_vs_llvm_mca(cpu, cluster, loop, tmp_path):
    if MCA is None:
        if os.environ.get("CI") == "true":
            pytest.fail("llvm-mca missing on CI")
        pytest.skip("llvm-mca not installed")
    soc = load_soc("sd865")
    asm, mix, units = LOOPS[loop]
    src = tmp_path / f"{loop}.s"
    src.write_text(asm)
    ours = unit_cycles(soc.cluster(cluster), mix) * units
    theirs = _mca_cycles(cpu, src)
    assert BAND[0] <= theirs / ours <= BAND[1], f"{cpu} {loop}: llvm-mca {theirs:.1f} vs model {ours:.1f} cycles"
