#!/usr/bin/env bash
# CPU inference split by rows (ops::for_row_chunks) against the per-op split, beside
# PyTorch on the same host, and where simple-mlp's CPU training step varies between
# runs (alone, with a CUDA context in the process, the host's steal time).
#   tools/device/run.sh cpu_infer:300
set -u
OUT=${OUT:-/tmp/roofline-cpu-infer}
mkdir -p "$OUT/cpu_infer"
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
  for chunks in 1 0; do
    peer=(); [ "$chunks" = 1 ] && peer=(--peer pytorch)
    ROOFLINE_INFER_ROW_CHUNKS=$chunks timeout 120 "$R" --json bench "$m" --device cpu --mode infer --batch 64,128 \
      "${peer[@]}" > "$OUT/cpu_infer/$m-chunks$chunks.json" 2> "$OUT/cpu_infer/$m-chunks$chunks.log"
    echo "$m row chunks=$chunks rc=$?"
    pick "$OUT/cpu_infer/$m-chunks$chunks.json"
  done
done
steal
for dev in cpu cpu,gpu; do
  for rep in 1 2; do
    timeout 120 "$R" --json bench simple-mlp --device "$dev" --mode train --batch 64,128 --epochs 1 --max-steps 400 \
      > "$OUT/cpu_infer/train-$dev-$rep.json" 2> "$OUT/cpu_infer/train-$dev-$rep.log"
    echo "simple-mlp train --device $dev (#$rep) rc=$?"
    pick "$OUT/cpu_infer/train-$dev-$rep.json"
  done
done
steal
