#!/usr/bin/env bash
# The CPU engine with work split by rows (ops::for_row_chunks: a forward, and the
# row part of a backward, in one parallel region) against the per-op split
# (ROOFLINE_ROW_CHUNKS=0), training and inference at batch 64 and 128, beside
# PyTorch on the same host; the host's steal time around it.
#   tools/device/run.sh cpu_rows:400
set -u
OUT=${OUT:-/tmp/roofline-cpu-rows}
mkdir -p "$OUT/cpu_rows"
export ROOFLINE_DB=${ROOFLINE_DB:-$OUT/roofline.db}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
R=./build/bin/roofline
echo "host: $(nproc) CPUs, $(lscpu | grep -E '^Thread\(s\) per core|^Core\(s\) per socket|^Model name' | tr -s ' ' | tr '\n' ';')"
steal() { awk '/^cpu /{print "steal jiffies " $9 ", total " $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }
pick() {  # the runs of a bench --json output: source, device, batch, step and inference times
  python3 - "$1" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    print("  no JSON:", e); sys.exit(0)
for t in j["tables"]:
    if t["id"] == "bench.details":
        for r in t["rows"]:
            f = lambda k: "-" if r.get(k) is None else f"{r[k]:.1f}"
            print(f"  {r['source']:8} {r['model']:10} {r['device']:3} b{r['batch']:<4} step {f('step_us'):>7} us"
                  f"  infer {f('infer_us'):>7} us (iqr {f('infer_iqr_us')})  epochs {r.get('epoch_s')}")
PY
}
steal
for m in simple-mlp simple-cnn ece408; do
  steps=300; [ "$m" = ece408 ] && steps=100
  for chunks in 1 0; do
    peer=(); [ "$chunks" = 1 ] && peer=(--peer pytorch)
    ROOFLINE_ROW_CHUNKS=$chunks timeout 150 "$R" --json bench "$m" --device cpu --mode train,infer --batch 64,128 \
      --epochs 1 --max-steps $steps "${peer[@]}" > "$OUT/cpu_rows/$m-chunks$chunks.json" 2> "$OUT/cpu_rows/$m-chunks$chunks.log"
    echo "$m row chunks=$chunks rc=$?"
    pick "$OUT/cpu_rows/$m-chunks$chunks.json"
  done
done
steal
