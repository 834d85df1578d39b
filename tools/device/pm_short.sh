#!/usr/bin/env bash
# profile_target (a 0.4 s program) under --pm-sampling ended with SIGSEGV at exit
# and no profile (H100, 2026-11-24): the crashing thread's frames, 4 runs.
#   tools/device/run.sh pm_short:60
set -u
OUT=${OUT:-/tmp/roofline-pm-short}
D="$OUT/pm_short"; mkdir -p "$D"
export ROOFLINE_DB="$D/pm.db"
for rep in 1 2 3 4; do
  ROOFLINE_CRASH_BACKTRACE=1 ./build/bin/roofline -q profile --pm-sampling -- ./build/tests/programs/profile_target \
    > "$D/run$rep.txt" 2>&1
  echo "pm_short run $rep: rc=$?"
  grep -A14 "crash backtrace" "$D/run$rep.txt" | head -15
done
