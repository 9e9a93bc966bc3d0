#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh Debian/Ubuntu machine, then run it.
# Oracle tools: clang + lld (Hexagon cross-compiler), qemu-user (qemu-hexagon), llvm (llvm-mca);
# chromium renders the HTML report in the report tests.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v qemu-hexagon >/dev/null 2>&1 || need+=(qemu-user)
command -v clang >/dev/null 2>&1 || need+=(clang)
command -v ld.lld >/dev/null 2>&1 || need+=(lld)
command -v llvm-mca >/dev/null 2>&1 || need+=(llvm)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "installing system packages: ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

python3 -m pip install -q -e ".[test]"
bash scripts/lint.sh
exec python3 -m pytest -n 2 "$@"
