#!/usr/bin/env bash
# On the GPU machine: the sweep's GPU tests, the GPU ceilings (when this build
# has `roofline ceilings`), the five-variant sweep, and the charts. Everything
# lands in $OUT; the last lines printed are the per-k ratios to predicted.
#   usage: OUT=/some/dir tools/device/sweep.sh      (expects the build in ./build)
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:${LD_LIBRARY_PATH:-}
export ROOFLINE_DB="$OUT/roofline.db"
R="$B/bin/roofline"
status=0

nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv >"$OUT/nvidia-smi.csv" 2>&1 || true

# The sweep kernels' SASS as this machine's cuobjdump reads it (the binary also
# runs this check itself when the build machine had no cuobjdump).
CUOBJDUMP=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
if [[ -x "$CUOBJDUMP" ]]; then
  "$CUOBJDUMP" -sass -fun compute_k_terms,compute_k_terms_fma,compute_k_terms_fp64,compute_k_terms_fp16,compute_k_terms_bf16 \
    "$R" >"$OUT/sweep-kernels.sass" 2>&1 || echo "cuobjdump failed (see $OUT/sweep-kernels.sass)"
else
  echo "no cuobjdump on this machine: the SASS check will say it was not done"
fi

echo "== GPU tests (sweep)"
if [[ -x "$B/bin/roofline_gpu_tests" ]]; then
  "$B/bin/roofline_gpu_tests" --gtest_filter='SweepGpu*' >"$OUT/gpu-tests.txt" 2>&1 || status=1
  grep -E '^\[  (PASSED|FAILED|SKIPPED) |^SASS|Failure' "$OUT/gpu-tests.txt" | head -30
else
  echo "no roofline_gpu_tests in $B/bin"; status=1
fi

echo "== GPU ceilings"
if "$R" --help 2>&1 | grep -qE '^\s+ceilings\b'; then
  "$R" ceilings --quick --device gpu >"$OUT/ceilings.txt" 2>&1 || { echo "roofline ceilings failed"; status=1; }
  tail -n 30 "$OUT/ceilings.txt"
else
  echo "this build has no 'roofline ceilings': percent of peak will use theoretical figures (and say so)"
fi

echo "== sweep"
"$R" sweep --device gpu --variants fp32,fma,fp64,fp16,bf16 --csv-out "$OUT/sweep.csv" >"$OUT/sweep.txt" 2>"$OUT/sweep.err" \
  || { echo "sweep failed:"; tail -n 20 "$OUT/sweep.err"; status=1; }
"$R" --json runs --command sweep -n 1 >"$OUT/sweep-run.json" 2>/dev/null || true

echo "== charts"
"$R" chart --device gpu --out "$OUT/charts" 2>&1 | tail -n 5 || status=1

echo "== notes and warnings"
grep -E '^\s+note: (SASS|peak|bandwidth)' "$OUT/sweep.txt" | sort -u | head -20
grep -E '^(warning|note):' "$OUT/sweep.txt" | head -20

echo "== ratio to predicted per k (flag: < 0.9)"
awk '/ sweep on /{title=$0; print title} /^ +[0-9]+ +[0-9.]+ /{printf "  k=%-5s GFLOP/s %-10s predicted %-10s ratio %s %s\n", $1, $3, $6, $7, ($7 < 0.9 ? "<-- below 0.9" : "")}' "$OUT/sweep.txt"
exit $status
