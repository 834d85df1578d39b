#!/usr/bin/env bash
# How often overhead_workload small (300000 launches) ends in heap corruption
# under --pm-sampling, by sampling interval, counter-data image size
# (ROOFLINE_PM_IMAGE_SAMPLES) and hardware buffer size (ROOFLINE_PM_HW_MB).
#   tools/device/run.sh pm_crash_rate:200[:REPS]
set -u
OUT=${OUT:-/tmp/roofline-pm-rate}
D="$OUT/pm_rate"; mkdir -p "$D"
R=./build/bin/roofline P=./build/tests/programs/overhead_workload
export ROOFLINE_DB="$D/pm.db"
REPS=${1:-3}
try() {  # label, interval us, env...
  local label=$1 iv=$2; shift 2
  local bad=0 codes=""
  for rep in $(seq "$REPS"); do
    env "$@" "$R" -q profile --pm-sampling --pm-interval "$iv" -- "$P" small > "$D/$label-$rep.txt" 2>&1
    rc=$?; codes="$codes $rc"; [[ $rc -ne 0 ]] && bad=$((bad + 1))
  done
  echo "PMRATE $label interval=${iv}us: $bad/$REPS crashed (exit codes$codes); guard caught an overrun in" \
    "$(grep -l 'past the counter-data image' "$D/$label"-*.txt 2>/dev/null | wc -l)/$REPS"
  grep -h "past the counter-data image" "$D/$label"-*.txt 2>/dev/null | head -2
}
try default 100
try default-noapi 100 ROOFLINE_API=0
try default20 20
try default1ms 1000
try default10ms 10000
