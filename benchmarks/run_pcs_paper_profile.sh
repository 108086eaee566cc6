#!/bin/bash
# PCS paper profile, timed: every PCS stage notebook with --profile paper, one after another, with the
# machine's load before and after each (the figures in benchmarks/results/pcs_paper_profile.txt).
# Usage: benchmarks/run_pcs_paper_profile.sh OUTPUT_ROOT   (from the repository, venv in .venv)
set -u
cd "$(dirname "$0")/.."
OUT=${1:?usage: $0 OUTPUT_ROOT}
mkdir -p "$OUT"
export PATH=$PWD/.venv/bin:$PATH
T0=$(date +%s)
echo "== PCS paper profile at $(git log --oneline -1 | cut -c1-7) start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
for s in fig9 fig7 fig3 fig8 fig10c fig11 fig1 fig10 testbed exactness; do
  echo "== pcs/$s start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  /usr/bin/time -f "pcs/$s wall %e s cpu %U+%S s maxrss %M KB" \
    schedlab notebook run "pcs/$s" --profile paper --output-root "$OUT" > "$OUT/$s.log" 2>&1
  rc=$?
  tail -1 "$OUT/$s.log"
  echo "== pcs/$s rc $rc end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo "== total $(( $(date +%s) - T0 )) s, end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
