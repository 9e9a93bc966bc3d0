#!/usr/bin/env bash
# Run every workload in workloads/ with --deterministic and keep its summary JSON, console table,
# trace and CSVs in DIR, so that a refactor can be checked byte for byte against the code before:
#   bash scripts/golden.sh /tmp/before        # on the old commit
#   bash scripts/golden.sh /tmp/after         # on the new one
#   diff -r /tmp/before /tmp/after            # must print nothing (report.html is skipped: it
#                                             # names the run's wall time)
# Each workload runs on the SoC and scheduler it names, as its header's command does.
set -euo pipefail
cd "$(dirname "$0")/.."
# this checkout's code, whichever one is installed
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
socsim() { python3 -c 'import sys; from socsim.cli import main; sys.argv[0] = "socsim"; main()' "$@"; }
dest="${1:?usage: scripts/golden.sh DIR}"
mkdir -p "$dest"
for w in workloads/*.yaml; do
  n=$(basename "$w" .yaml)
  soc=$(sed -n 's/^# .*socsim \(run\|compare\) --soc \([a-z0-9]*\).*/\2/p' "$w" | head -n 1)
  soc="${soc:-sd865}"
  rm -rf "$dest/$n"
  socsim run --soc "$soc" "$w" --deterministic --quiet --json "$dest/$n.json" --out "$dest/$n" \
    > "$dest/$n.stdout" 2> "$dest/$n.stderr" || echo "exit $? : $w" >> "$dest/FAILED"
  rm -f "$dest/$n/report.html"
done
# every built-in baseline once, on one workload
socsim compare --soc sd865 workloads/baselines_vgg16.yaml --deterministic --quiet \
  --schedulers mnn-fp32,tflite-fp32,pytorch,mnn-fp32-gpu,mnn-int8,octo --json "$dest/compare_baselines.json" \
  > "$dest/compare_baselines.stdout" 2>&1 || echo "exit $? : compare" >> "$dest/FAILED"
ls "$dest"/*.json | wc -l
