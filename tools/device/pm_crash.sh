#!/usr/bin/env bash
# ProfileGpu.PmSamplingKeepsKernelRecords: overhead_workload small (300000 tiny
# launches) under --pm-sampling ends in SIGSEGV after its loop (H100,
# 2026-11-24), while short programs under PM sampling exit cleanly. This
# collects the crashing thread's frames (ROOFLINE_CRASH_BACKTRACE) and, where
# gdb exists, every thread's stack; also the same run with snapshots off and
# with API records off, to narrow it down.
#   tools/device/run.sh pm_crash:120
set -u
OUT=${OUT:-/tmp/roofline-pm-crash}
D="$OUT/pm_crash"; mkdir -p "$D"
R=./build/bin/roofline P=./build/tests/programs/overhead_workload
export ROOFLINE_DB="$D/pm.db"
MDBG=$(ls /usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0 2>/dev/null)
for v in default nosnap noapi noapi_nopool default_nopool noapi_nopm noapi_mcheck; do
  extra=() pm=(--pm-sampling)
  [[ $v == nosnap ]] && extra=(ROOFLINE_SNAPSHOT_MS=1000000)
  [[ $v == noapi* ]] && extra=(ROOFLINE_API=0)
  [[ $v == *nopool ]] && extra+=(ROOFLINE_CUPTI_POOL=0)
  [[ $v == *nopm ]] && pm=()
  [[ $v == *mcheck && -n $MDBG ]] && extra+=(LD_PRELOAD=$MDBG GLIBC_TUNABLES=glibc.malloc.check=3)
  env ROOFLINE_CRASH_BACKTRACE=1 "${extra[@]}" "$R" -q profile "${pm[@]}" -- "$P" small > "$D/$v.txt" 2>&1
  echo "pm_crash $v: rc=$?"
  grep -A30 "crash backtrace" "$D/$v.txt" | head -32
done
if command -v gdb > /dev/null; then
  mkdir -p /tmp/pmout
  CUDA_INJECTION64_PATH=$PWD/build/lib/libroofline_inject.so ROOFLINE_PROFILE_OUT=/tmp/pmout ROOFLINE_PM=1 \
    timeout 100 gdb -q -batch -ex "set pagination off" -ex run -ex "thread apply all bt 20" --args "$P" small \
    > "$D/gdb.txt" 2>&1
  grep -vE "^\[New Thread|^\[Thread .* exited" "$D/gdb.txt" | tail -80
else
  echo "no gdb on this machine"
fi
