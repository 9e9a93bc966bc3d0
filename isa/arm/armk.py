"""ARM CPU kernels from instruction streams: compile, run under qemu-aarch64, cost with llvm-mca.

The kernels (isa/arm/kernels/*.c, NEON intrinsics) are the inner loops MNN runs for CNN
training and inference on arm64: the FP32 GEMM on its 12x8 tile, INT8 GEMM with SDOT, im2col
packing, col2im scatter-add, depthwise 3x3, element-wise kernels and Winograd F(2x2,3x3)
transforms.  This module

- builds each kernel as a freestanding aarch64 program (``build``) and runs it under
  qemu-aarch64 (``run``), so that tests/isa/test_armk_oracle.py checks it against numpy;
- compiles it to assembly, takes the steady-state inner loop of each costed function
  (``inner_loop``) and runs llvm-mca on it with the scheduling model that stands in for each
  core type (``CORE_MODELS``), giving cycles per inner-loop unit (``measure``);
- writes the table socsim reads at run time (``calibration/armk_cycles.json``; ``python -m
  isa.arm.armk --write``), so socsim needs neither clang nor llvm-mca.

llvm-mca models the core's back end only: issue, pipes, latencies and dependences of a loop
whose data is in L1 and whose branches predict.  Cache misses, the front end (fetch, decode
bandwidth beyond the model's dispatch width) and the code outside the inner loop are not in
it; socsim adds the memory hierarchy itself (socsim.hw.memory) and keeps the rest as fitted
residuals (docs/modeling.md).  docs/oracles.md section 2 has the commands.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

KERNEL_DIR = Path(__file__).parent / "kernels"
TABLE = Path(__file__).resolve().parents[2] / "calibration" / "armk_cycles.json"

# One binary for every core, as a framework ships it (MNN's arm64 library is built once for
# armv8.2-a with dot product; its kernels are not scheduled per core): the instruction stream
# is the same on every core type and only the scheduling model changes.
TARGET = ["--target=aarch64-linux-gnu", "-march=armv8.2-a+dotprod"]
FREESTANDING = ["-ffreestanding", "-fno-builtin", "-nostdlib", "-static", "-fuse-ld=lld"]
MCA_ITERATIONS = 200

# socsim core type -> the LLVM scheduling model (its -mcpu name in LLVM 19) that stands in for it.
# LLVM 19 (Debian 12's llvm-19) gives cortex-a75/a76/a77/a78/x1 the old Cortex-A57 model
# (3-wide, FMLA by element on one pipe: half the A76's measured NEON throughput), so the Neoverse
# cores derived from them stand in: Neoverse N1 is the infrastructure version of the Cortex-A76
# (Arm's N1 Software Optimization Guide lists the same two 128-bit ASIMD pipes) and covers the
# A76, A77 and A78 (two ASIMD pipes too; their wider front ends are what the N1 model leaves out);
# Neoverse V1 is derived from the Cortex-X1 (four 128-bit ASIMD pipes); Neoverse N2 from the
# Cortex-A710, standing in for the A715; Neoverse V2 from the Cortex-X3.  The A55, A510 and
# Exynos M4 have models of their own; the A75 keeps LLVM's choice (the A57 model: no
# closer one exists).  The Cortex-A720 keeps LLVM 19's own choice, the Neoverse N2 model (the
# A715's stand-in: two 128-bit ASIMD pipes, Arm Cortex-A720 Software Optimization Guide).  LLVM 19
# gives the Cortex-X4 the Neoverse N2 model too (two ASIMD pipes, as it does the X3), against the
# X4's four (Arm Cortex-X4 Software Optimization Guide, V0-V3); Neoverse V2 (four 128-bit pipes),
# the X3's stand-in here, stands in for the X4, the X3's successor with the same vector back end.
# The ARMv8.0 Cortex-A53 has its own in-order model; the Cortex-A73 keeps LLVM's choice, the
# Cortex-A57 model (as the A75: no closer one exists).  Their INT8 entries cost the SDOT stream,
# which these cores cannot run (no dot product): socsim runs no INT8 kernel on them
# (socsim/fidelity/ncnn.py skips ncnn's INT8 rows there).
CORE_MODELS: dict[str, str] = {
    "cortex-a55": "cortex-a55",
    "cortex-a510": "cortex-a510",
    "cortex-a75": "cortex-a75",
    "cortex-a76": "neoverse-n1",
    "cortex-a77": "neoverse-n1",
    "cortex-a78": "neoverse-n1",
    "cortex-x1": "neoverse-v1",
    "cortex-a715": "neoverse-n2",
    "cortex-x3": "neoverse-v2",
    "exynos-m4": "exynos-m4",
    "cortex-a720": "cortex-a720",
    "cortex-x4": "neoverse-v2",
    "cortex-a53": "cortex-a53",
    "cortex-a73": "cortex-a73",
}


@dataclass(frozen=True)
class Loop:
    """A costed inner loop: the function holding it, what one inner-loop unit is, and the
    instructions that count units: ``per_unit`` matches of the mnemonic regex ``marks`` (an STP
    counts twice: it stores two vectors) make one unit.  The loop's units per iteration are
    counted in the assembly, so the compiler may unroll it (clang unrolls the short loops 4x,
    as the frameworks' hand-written kernels handle several vectors an iteration)."""

    kernel: str       # source file stem
    function: str
    unit: str         # what a unit is
    marks: str        # mnemonic regex
    per_unit: int


LOOPS: dict[str, Loop] = {
    "gemm_f32_12x8": Loop("gemm_f32_12x8", "gemm_f32_12x8", "one FMLA (4 MACs)", r"fmla", 1),
    "gemm_s8_sdot_12x8": Loop("gemm_s8_sdot_12x8", "gemm_s8_sdot_12x8", "one SDOT (16 MACs)", r"sdot", 1),
    "im2col_pack": Loop("im2col_pack_f32", "im2col_pack", "one 4-float vector packed", r"str|st1|stp", 1),
    "col2im_add": Loop("col2im_f32", "col2im_row", "one 4-float vector added", r"fadd", 1),
    "dw3x3": Loop("dw3x3_f32", "dw3x3_row", "one output vector (9 taps)", r"fmla|fmul", 9),
    "relu": Loop("eltwise_f32", "relu_f32", "one output vector", r"fmax", 1),
    "add": Loop("eltwise_f32", "add_f32", "one output vector", r"fadd", 1),
    "scalebias": Loop("eltwise_f32", "scalebias_f32", "one output vector", r"fmla", 1),
    "relu_grad": Loop("eltwise_f32", "relu_grad_f32", "one output vector", r"fcmgt", 1),
    "wino23_src": Loop("winograd_f23", "wino23_src", "one 4x4 input tile of vectors", r"fadd|fsub", 32),
    "wino23_dst": Loop("winograd_f23", "wino23_dst", "one 2x2 output tile of vectors", r"fadd|fsub", 24),
}


def tool(*names: str) -> str | None:
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return None


def clang() -> str | None:
    return tool("clang", "clang-19", "clang-14")


def mca() -> str | None:
    """llvm-mca with the Neoverse models (LLVM 17 or later; Debian 12: package llvm-19)."""
    return tool("llvm-mca-19", "llvm-mca-18", "llvm-mca-17")


def qemu() -> str | None:
    return tool("qemu-aarch64", "qemu-aarch64-static")


def build(kernel: str, out_dir: Path) -> Path:
    """Compile ``kernel`` (a file stem in isa/arm/kernels) to a freestanding aarch64 program."""
    exe = out_dir / kernel
    cc = clang()
    if cc is None:
        raise FileNotFoundError("clang not found (apt-get install clang lld)")
    subprocess.run([cc, *TARGET, "-O2", *FREESTANDING, str(KERNEL_DIR / f"{kernel}.c"), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    return exe


def run(exe: Path, data: bytes) -> bytes:
    """Run a built kernel under qemu-aarch64 with ``data`` on stdin; its stdout."""
    q = qemu()
    if q is None:
        raise FileNotFoundError("qemu-aarch64 not found (apt-get install qemu-user)")
    r = subprocess.run([q, str(exe)], input=data, capture_output=True, check=True)
    return r.stdout


def assembly(kernel: str) -> str:
    """clang -O3 assembly of a kernel file (one binary for every core, TARGET)."""
    cc = clang()
    if cc is None:
        raise FileNotFoundError("clang not found")
    return subprocess.run([cc, *TARGET, "-O3", "-ffreestanding", "-fno-builtin", "-S", "-o", "-",
                           str(KERNEL_DIR / f"{kernel}.c")], check=True, capture_output=True, text=True).stdout


_LABEL = re.compile(r"^([.\w$]+):")
_BRANCH = re.compile(r"^\s*(b\.\w+|b|cbn?z|tbn?z)\s+(?:.*,\s*)?([.\w$]+)\s*$")


def marks(body: list[str], regex: str) -> int:
    """Matches of the mnemonic regex in a loop body, an STP counting twice."""
    return sum(2 if ins.split()[0] == "stp" else 1 for ins in body if re.fullmatch(regex, ins.split()[0]))


def inner_loop(asm: str, function: str, regex: str) -> list[str]:
    """The instructions of ``function``'s steady-state loop: of its innermost loops (a label to
    the branch back to it, no other backward branch inside) the one with the most matches of
    the mnemonic regex (an unrolled loop's remainder loop has fewer).  ValueError if none."""
    lines = asm.splitlines()
    try:
        start = next(i for i, ln in enumerate(lines) if ln.startswith(f"{function}:"))
    except StopIteration:
        raise ValueError(f"function {function} not in the assembly") from None
    end = next((i for i in range(start, len(lines)) if lines[i].startswith(".Lfunc_end") or
                lines[i].strip().startswith(".size") and function in lines[i]), len(lines))
    body = lines[start + 1:end]
    labels = {m.group(1): i for i, ln in enumerate(body) if (m := _LABEL.match(ln))}
    loops = []
    for i, ln in enumerate(body):
        m = _BRANCH.match(ln.split("//")[0])
        if m and m.group(2) in labels and labels[m.group(2)] < i:
            loops.append((labels[m.group(2)], i))
    inner = [(a, b) for a, b in loops if not any(a < c and d <= b and (c, d) != (a, b) for c, d in loops)]
    bodies = []
    for a, b in inner:
        out = []
        for ln in body[a:b + 1]:
            s = ln.split("//")[0].rstrip()
            if not s.strip() or _LABEL.match(s) or s.strip().startswith("."):
                continue
            out.append(s.strip())
        bodies.append(out)
    if not bodies:
        raise ValueError(f"{function}: no loop in the assembly")
    return max(bodies, key=lambda b: marks(b, regex))


def mca_cycles(instructions: list[str], model: str, tmp: Path) -> float:
    """llvm-mca's steady-state cycles per iteration of a loop body on the ``model`` core."""
    m = mca()
    if m is None:
        raise FileNotFoundError("llvm-mca 17+ not found (apt-get install llvm-19)")
    src = tmp / f"loop_{model}.s"
    src.write_text("\n".join(instructions) + "\n")
    out = subprocess.run([m, "-mtriple=aarch64", f"-mcpu={model}", "-mattr=+dotprod",
                          f"-iterations={MCA_ITERATIONS}", str(src)], check=True, capture_output=True, text=True).stdout
    found = re.search(r"Total Cycles:\s+(\d+)", out)
    assert found, out
    return int(found.group(1)) / MCA_ITERATIONS


def tool_versions() -> dict[str, str]:
    out = {}
    for name, path in (("clang", clang()), ("llvm-mca", mca())):
        if path:
            v = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
            found = re.search(r"version (\d+\.\d+\.\d+)", v)
            out[name] = found.group(1) if found else v.strip().splitlines()[0]
    return out


def measure(tmp: Path) -> dict:
    """The cycles table: kernel -> core type -> cycles per inner-loop unit, with provenance."""
    asm_cache: dict[str, str] = {}
    kernels = {}
    for name, lp in LOOPS.items():
        asm = asm_cache.setdefault(lp.kernel, assembly(lp.kernel))
        body = inner_loop(asm, lp.function, lp.marks)
        found = marks(body, lp.marks)
        if found == 0 or found % lp.per_unit:
            raise ValueError(f"{name}: {found} x /{lp.marks}/ in the loop, not a multiple of {lp.per_unit}:\n"
                             + "\n".join(body))
        units = found // lp.per_unit
        cycles = {core: round(mca_cycles(body, model, tmp) / units, 4) for core, model in CORE_MODELS.items()}
        kernels[name] = {"source": f"isa/arm/kernels/{lp.kernel}.c", "function": lp.function, "unit": lp.unit,
                         "units_per_iteration": units, "instructions_per_iteration": len(body),
                         "cycles_per_unit": cycles}
    return {
        "about": "Cycles per inner-loop unit of socsim's ARM kernels (isa/arm/kernels) on each core type, from "
                 "llvm-mca's scheduling model standing in for it (data in L1, back end only: no cache misses, no "
                 "front-end stalls, no code outside the inner loop). Regenerate: python -m isa.arm.armk --write; "
                 "tests/isa/test_armk_oracle.py checks that this file matches. docs/oracles.md section 2.",
        "commands": {
            "compile": "clang " + " ".join(TARGET) + " -O3 -ffreestanding -fno-builtin -S KERNEL.c",
            "cost": f"llvm-mca -mtriple=aarch64 -mcpu=MODEL -mattr=+dotprod -iterations={MCA_ITERATIONS} LOOP.s",
        },
        "tools": tool_versions(),
        "core_models": dict(CORE_MODELS),
        "kernels": kernels,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m isa.arm.armk", description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"write {TABLE.name} (else print it)")
    args = ap.parse_args(argv)
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        table = measure(Path(d))
    text = json.dumps(table, indent=1, sort_keys=True) + "\n"
    if args.write:
        TABLE.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
