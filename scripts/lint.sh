#!/usr/bin/env bash
# Static checks: ruff over the code and tests (rules in pyproject.toml), mypy over the scheduler
# contract and the engine (the code every plugin and every run goes through).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m ruff check socsim isa tests benchmarks scripts examples
python3 -m mypy socsim/contract socsim/engine
