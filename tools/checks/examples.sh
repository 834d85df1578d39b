#!/usr/bin/env bash
# The text output of each command on the GPU machine, for the examples in README.md
# and docs/commands.md (real output, not typed by hand), with each command's exit
# code and time. Builds nothing: uses ./build.   tools/checks/run.sh examples:180
set -u
OUT=${OUT:-/tmp/roofline-examples}
D="$OUT/examples"; mkdir -p "$D"
R=./build/bin/roofline
export ROOFLINE_DB="$D/examples.db"
failed=0
run() {  # name, then the command line
  local name=$1; shift
  local start; start=$(date +%s.%N)
  "$@" > "$D/$name.txt" 2> "$D/$name.err"
  local rc=$?
  awk -v n="$name" -v r="$rc" -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%-16s rc=%d %.1f s\n", n, r, e-s}'
  ((rc == 0)) || failed=$((failed + 1))
}
run device        $R device --device gpu
run ceilings      $R ceilings --device gpu --quick
run sweep         $R sweep --device gpu --variants fp32 --kernel overlap
run chart         $R chart --device gpu --out "$D/charts"
run bench         $R bench simple-mlp --device gpu --batch 128 --epochs 1 --infer-reps 50
run bench_profile $R bench simple-mlp --device gpu --mode train --batch 128 --epochs 1 --no-graphs --profile
run profile       $R profile --pm-sampling -- ./build/tests/programs/profile_target
run counters      $R profile --counters -- ./build/bin/known_flops
run ops_perf      $R ops --perf --device gpu --batch 128
run runs          $R runs
ls -la "$D"
((failed == 0)) || { echo "FAIL $failed command(s) exited non-zero"; exit 1; }
