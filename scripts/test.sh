#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh Debian/Ubuntu machine, then run it.
# Oracle tools: clang + lld (Hexagon and aarch64 cross-compiler), qemu-user (qemu-hexagon,
# qemu-aarch64), llvm (llvm-mca 14) and llvm-19 (llvm-mca 19);
# chromium renders the HTML report in the report tests.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v qemu-hexagon >/dev/null 2>&1 || need+=(qemu-user)
command -v clang >/dev/null 2>&1 || need+=(clang)
command -v ld.lld >/dev/null 2>&1 || need+=(lld)
command -v llvm-mca >/dev/null 2>&1 || need+=(llvm)
# llvm-mca 17+ for the Neoverse models that stand in for the big cores (isa/arm/armk.py)
command -v llvm-mca-19 >/dev/null 2>&1 || need+=(llvm-19)
command -v qemu-aarch64 >/dev/null 2>&1 || need+=(qemu-user)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "installing system packages: ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

python3 -m pip install -q -e ".[test]"
# The PyTorch import tests (tests/workload/test_torch_import.py) need torch, installed by package
# name through pip as this machine configures it (its indexes and wheel folders; a CPU-only build
# where they hold one).  Best effort, capped at five minutes: where torch cannot be installed the
# torch tests skip, and the ONNX round trips (tests/workload/test_onnx_roundtrip.py, no torch
# needed) still check the importer.  SOCSIM_CI_TORCH=0 leaves it out.
if [ "${SOCSIM_CI_TORCH:-1}" != "0" ] && ! python3 -c "import torch" >/dev/null 2>&1; then
  echo "installing torch for the PyTorch import tests"
  timeout 300 python3 -m pip install -q --retries 1 --timeout 60 torch \
    || echo "torch not installed: the PyTorch import tests skip"
fi
bash scripts/lint.sh
exec python3 -m pytest -n 2 "$@"
