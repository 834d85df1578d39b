#!/usr/bin/env bash
# Heap corruption hunt for --pm-sampling on long programs: overhead_workload
# small (300000 launches) profiled with an AddressSanitizer build of the
# injection library (.carry/asan/libroofline_inject.so, built here with
# -fsanitize=address) and the matching libasan preloaded. ASan's report, if
# any, lands in $OUT/pm_asan/asan.*.
#   tools/device/run.sh pm_asan:120
set -u
OUT=${OUT:-/tmp/roofline-pm-asan}
D="$OUT/pm_asan"; mkdir -p "$D"
R=./build/bin/roofline P=./build/tests/programs/overhead_workload
export ROOFLINE_DB="$D/pm.db" ROOFLINE_INJECT_LIB=$PWD/.carry/asan/libroofline_inject.so
for v in noapi default; do
  extra=()
  [[ $v == noapi ]] && extra=(ROOFLINE_API=0)
  env "${extra[@]}" LD_PRELOAD=$PWD/.carry/asan/libasan.so.8 \
    ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0:halt_on_error=1:log_path=$D/asan.$v \
    "$R" -q profile --pm-sampling -- "$P" small > "$D/$v.txt" 2>&1
  echo "pm_asan $v: rc=$?"
  ls "$D" | grep "asan.$v" | head
  cat "$D"/asan.$v.* 2>/dev/null | grep -E "ERROR|#[0-9]+ |WRITE|READ|allocated|freed" | head -40
done
