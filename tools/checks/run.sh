#!/usr/bin/env bash
# The GPU machine's entry point for the checks (tools/checks/README.md): unpacks
# .carry/dist.tar.xz (made by tools/checks/pack.sh) into ./build, sets up the
# environment (cuDNN and NCCL from PyTorch's environment, the carried
# Fashion-MNIST), prints the machine, then runs each named check
# (tools/checks/<check>.sh) with a time limit. Each check gets a folder of its
# own as $OUT (and ROOFLINE_DB=$OUT/roofline.db); its output goes to
# <check>.log beside that folder, and the lines that carry verdicts are printed.
# Everything is bundled into the caller's $OUT/results.tgz at the end (the
# device tool brings back at most 8 files).
#
# Usage: tools/checks/run.sh CHECK[:SECONDS[:ARG,ARG...]]...
#   SECONDS: the check's limit (default 300); ARGs: its arguments (a gtest
#   filter may hold ':'; arguments are separated by ',').
#   CALL_S=N: the whole call's budget, counted from this script's start (the
#   device tool stops a command at 600 s, and nothing comes back then): a check
#   gets at most what is left less 15 s, and is skipped when under 30 s are left.
# Exit code: 0 when every check exited 0, else 1.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
T0=$(date +%s)
RESULTS=${OUT:-$PWD/out}
mkdir -p "$RESULTS"
WORK=/tmp/roofline-out
rm -rf "$WORK"
mkdir -p "$WORK"
trap 'tar -C "$WORK" -czf "$RESULTS/results.tgz" . 2>/dev/null; ls -la "$RESULTS"' EXIT
mkdir -p build
if ! tar -C build -xJf .carry/dist.tar.xz; then
  echo "FAIL no .carry/dist.tar.xz: run tools/checks/pack.sh here and carry .carry"
  exit 1
fi
source tools/checks/device_env.sh
export ROOFLINE_DATA=$PWD/.carry/fashion-mnist PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv
echo "unpacked in $(($(date +%s) - T0)) s"
SUMMARY=()
status=0
for spec in "$@"; do
  IFS=: read -r part limit args <<< "$spec"
  limit=${limit:-300}
  argv=()
  [[ -n ${args:-} ]] && IFS=, read -r -a argv <<< "$args"
  if [[ ! -f tools/checks/$part.sh ]]; then
    echo "=== $part: no tools/checks/$part.sh"
    SUMMARY+=("$(printf '%-16s unknown check' "$part")")
    status=1
    continue
  fi
  if [[ -n ${CALL_S:-} ]]; then
    left=$((CALL_S - ($(date +%s) - T0) - 15))
    if ((left < 30)); then
      echo "=== $part SKIPPED: ${left} s left of this call's ${CALL_S} s; run it in a call of its own"
      SUMMARY+=("$(printf '%-16s SKIPPED (no time left in this call)' "$part")")
      continue
    fi
    ((limit > left)) && limit=$left
  fi
  # A folder of its own, also when a check is named twice (e.g. sanitize with two filters).
  name=$part n=1
  while [[ -e $WORK/$name ]]; do n=$((n + 1)) name=$part-$n; done
  mkdir -p "$WORK/$name"
  echo "=== $name (limit ${limit}s) $(date -u +%T) ${argv[*]}"
  start=$(date +%s.%N)
  OUT=$WORK/$name ROOFLINE_DB=$WORK/$name/roofline.db \
    timeout --signal=TERM --kill-after=10 "$limit" bash "tools/checks/$part.sh" "${argv[@]}" > "$WORK/$name.log" 2>&1
  rc=$?
  secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e - s}')
  echo "=== $name rc=$rc ${secs}s$( ((rc == 124 || rc == 137)) && echo " (stopped at its limit)")"
  grep -E "PASS|MISS|FAIL|SKIP|RIDGE|OVERHEAD|error|Error|\[  FAILED|\[  PASSED" "$WORK/$name.log" | tail -40
  SUMMARY+=("$(printf '%-16s rc=%-3d %7ss' "$name" "$rc" "$secs")")
  ((rc == 0)) || status=1
done
echo "=== summary ($(($(date +%s) - T0)) s in all; logs and files in results.tgz)"
printf '%s\n' "${SUMMARY[@]}"
exit $status
