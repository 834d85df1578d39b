#!/usr/bin/env bash
# The GPU-machine entry point: unpacks .carry/dist.tar.xz into ./build, sets
# up the environment (cuDNN from PyTorch's environment), prints the machine,
# then runs each named part's script (tools/device/<part>.sh) with a time
# limit, logging to $OUT/<part>.log.
# Usage: tools/device/run.sh PART[:SECONDS[:ARG,ARG...]]...
set -uo pipefail
cd "$(dirname "$0")/../.."
# The device tool brings back at most 8 files: the parts write into a work
# folder, bundled into $OUT/results.tgz when this script ends.
RESULTS=${OUT:-$PWD/out}; mkdir -p "$RESULTS"
export OUT=/tmp/roofline-out; rm -rf "$OUT"; mkdir -p "$OUT"
trap 'tar -C "$OUT" -czf "$RESULTS/results.tgz" . 2>/dev/null; ls -la "$RESULTS"' EXIT
mkdir -p build && tar -C build -xJf .carry/dist.tar.xz
P=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
export LD_LIBRARY_PATH=$P/cudnn/lib:$P/nccl/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
export ROOFLINE_DATA=$PWD/.carry/fashion-mnist ROOFLINE_DB=$OUT/roofline.db PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv
for spec in "$@"; do
  IFS=: read -r part limit args <<< "$spec"
  limit=${limit:-300}
  IFS=, read -r -a argv <<< "${args:-}"
  echo "=== $part (limit ${limit}s) $(date -u +%T)"
  start=$(date +%s.%N)
  timeout --signal=TERM --kill-after=10 "$limit" bash "tools/device/$part.sh" "${argv[@]}" > "$OUT/$part.log" 2>&1
  rc=$?
  awk -v p="$part" -v r="$rc" -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "=== %s rc=%d %.1fs\n", p, r, e-s}'
  grep -E "PASS|MISS|FAIL|SKIP|RIDGE|OVERHEAD|error|Error|\[  FAILED|\[  PASSED" "$OUT/$part.log" | tail -40
done
