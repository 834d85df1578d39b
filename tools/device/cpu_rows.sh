#!/usr/bin/env bash
# The CPU engine with work split by rows (ops::for_row_chunks: a forward, and the
# row part of a backward, in one parallel region per pass) against the per-op split:
# ROOFLINE_ROW_CHUNKS=1 (both), =infer (inference only), =0 (neither) (MODES picks
# some), interleaved,
# REPS times each, training and inference at batch 64 and 128; medians per mode.
# The host's steal time is printed around it. VAR=ROOFLINE_ROW_PREFIX MODES="1 0"
# compares the leading wide Linear split by columns (1) with it inside the row
# split (0) instead. PEER=1 adds one PyTorch CPU run at the end for the ratios.
#   tools/device/run.sh cpu_rows:500
set -u
OUT=${OUT:-/tmp/roofline-cpu-rows}
mkdir -p "$OUT/cpu_rows"
export ROOFLINE_DB=${ROOFLINE_DB:-$OUT/roofline.db}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
R=./build/bin/roofline
REPS=${REPS:-3}
VAR=${VAR:-ROOFLINE_ROW_CHUNKS}
MODELS=${MODELS:-simple-mlp simple-cnn ece408}
echo "host: $(nproc) CPUs, $(lscpu | grep -E '^Thread\(s\) per core|^Core\(s\) per socket|^Model name' | tr -s ' ' | tr '\n' ';')"
steal() { awk '/^cpu /{print "steal jiffies " $9 ", total " $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }
steal
for m in $MODELS; do
  steps=300; [ "$m" = ece408 ] && steps=60
  for rep in $(seq "$REPS"); do
    for mode in ${MODES:-1 infer 0}; do
      env "$VAR=$mode" timeout 150 "$R" --json bench "$m" --device cpu --mode train,infer --batch 64,128 \
        --epochs 1 --max-steps $steps > "$OUT/cpu_rows/$m-$mode-$rep.json" 2> "$OUT/cpu_rows/$m-$mode-$rep.log" ||
        echo "$m mode $mode rep $rep: rc=$?"
    done
  done
done
steal
python3 - "$OUT/cpu_rows" <<'PY'
import glob, json, os, statistics, sys
rows = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    model, mode, rep = os.path.basename(f)[:-5].rsplit("-", 2)
    try:
        j = json.load(open(f))
    except Exception:
        continue
    for t in j["tables"]:
        if t["id"] == "bench.details":
            for r in t["rows"]:
                rows.setdefault((model, r["batch"], mode), []).append((r["step_us"], r["infer_us"]))
print(f"{'model':11}{'batch':>6}{'mode':>7}  step us (median; runs)                 infer us (median; runs)")
for (model, batch, mode), v in sorted(rows.items()):
    st = [a for a, _ in v]; inf = [b for _, b in v]
    print(f"{model:11}{batch:>6}{mode:>7}  {statistics.median(st):8.1f} ({' '.join(f'{x:.0f}' for x in st):24}) "
          f"{statistics.median(inf):8.1f} ({' '.join(f'{x:.1f}' for x in inf)})")
PY
if [ "${PEER:-0}" = 1 ]; then
  for m in $MODELS; do
    timeout 200 "$R" -q --csv bench "$m" --device cpu --mode train,infer --batch 64,128 --epochs 1 --max-steps 300 \
      --peer pytorch 2>/dev/null | grep -E "^(pytorch|roofline),cpu" | cut -d, -f1-4,9,12 | sed 's/^/peer run: /'
  done
fi
