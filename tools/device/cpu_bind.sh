#!/usr/bin/env bash
# simple-mlp's CPU inference moves 55-89 µs (b128) and 35-60 µs (b64) from one
# process to the next on the 16-core host. Are OpenMP threads sharing or
# changing vCPUs the cause? One process per run, interleaved, REPS times: the
# default against OMP_PROC_BIND=close OMP_PLACES=cores (each thread pinned).
#   tools/device/run.sh cpu_bind:200
set -u
OUT=${OUT:-/tmp/roofline-cpu-bind}
D="$OUT/cpu_bind"; mkdir -p "$D"
export ROOFLINE_DB="$D/bind.db"
R=./build/bin/roofline
# MODES: default, bound, tN (OMP_NUM_THREADS=N); MODE_ARGS: the bench's mode and length.
lscpu | grep -E "^(CPU\(s\)|Thread|Core|Socket|Model name|L2)" > "$D/lscpu.txt"
for rep in $(seq "${REPS:-8}"); do
  for mode in ${MODES:-default bound}; do
    case $mode in
      bound) e=(OMP_PROC_BIND=close OMP_PLACES=cores) ;;
      t*) e=(OMP_NUM_THREADS=${mode#t}) ;;
      *) e=() ;;
    esac
    # shellcheck disable=SC2086
    env "${e[@]}" "$R" -q --csv bench simple-mlp --batch 64,128 --device cpu ${MODE_ARGS:---mode train,infer --epochs 1 --max-steps 200} \
      2>/dev/null |
      awk -F, -v l="$mode" '$1=="roofline" && $2=="cpu" {printf "%s infer b%s %.1f\n", l, $4, $12; if ($9 != "") printf "%s step b%s %.1f\n", l, $4, $9}'
  done
done > "$D/runs.txt"
cat "$D/lscpu.txt"
python3 - "$D/runs.txt" <<'PY'
import collections, statistics, sys
v = collections.defaultdict(list)
for line in open(sys.argv[1]):
    *k, t = line.split(); v[" ".join(k)].append(float(t))
for k in sorted(v):
    print(f"{k:20} median {statistics.median(v[k]):7.1f} us  runs {' '.join(f'{x:.0f}' for x in v[k])}")
PY
