#!/usr/bin/env bash
# On the GPU machine, in one call of under 4 minutes: the GPU tests of the
# sweep and of the new ceiling kernels, `roofline ceilings --quick --device gpu`
# (target < 60 s), the full sweep (five variants; the seed's kernel, the
# overlap kernel and the warp-specialized "ws" kernel), the charts, and the
# SASS of the kernels. Everything lands in $OUT; the last lines are PASS/MISS
# per (variant, kernel, k) for the overlap and ws kernels against the target
# 0.9 <= achieved / predicted <= 1.1 (with the SM clock of each point), then
# what the seed's kernel reached and why (no-overlap model, Little's law;
# "SKIP": not judged), then the totals per kernel. About 60 s on the H100.
#   usage: OUT=/some/dir tools/checks/sweep.sh      (expects the build in ./build)
#   tools/checks/pack.sh here, then on the device tools/checks/run.sh sweep:200
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
source tools/checks/device_env.sh
export PATH=/usr/local/cuda/bin:$PATH
export ROOFLINE_DB="$OUT/roofline.db"
R="$B/bin/roofline"
status=0
t_start=$(date +%s)
elapsed() { echo $(( $(date +%s) - t_start ))s; }

nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active \
  --format=csv >"$OUT/nvidia-smi-before.csv" 2>&1 || true

echo "== SASS of the sweep kernels and the add+multiply / DMMA ceiling kernels ($(elapsed))"
# The binary also checks its own SASS at run time when the build machine had
# no cuobjdump; this copy is for people (and the summary below).
KERNELS=compute_k_terms,compute_k_terms_fma,compute_k_terms_fp64,compute_k_terms_fp16,compute_k_terms_bf16
KERNELS=$KERNELS,overlap_k_terms,overlap_k_terms_fma,overlap_k_terms_fp64,overlap_k_terms_fp16,overlap_k_terms_bf16
KERNELS=$KERNELS,ws_k_terms,ws_k_terms_fma,ws_k_terms_fp64,ws_k_terms_fp16,ws_k_terms_bf16
if command -v cuobjdump >/dev/null; then
  cuobjdump -sass -fun "$KERNELS" "$R" >"$OUT/sweep-kernels.sass" 2>&1 || echo "cuobjdump failed (see sweep-kernels.sass)"
  for obj in "$B"/CMakeFiles/roofline_lib.dir/src/ceilings/gpu/addmul_kernels.cu.o \
             "$B"/CMakeFiles/roofline_lib.dir/src/ceilings/gpu/dmma_kernels.cu.o; do
    [ -f "$obj" ] && cuobjdump -sass "$obj" >"$OUT/$(basename "$obj").sass" 2>&1
  done
  {
    cuobjdump -res-usage "$R" 2>/dev/null | grep -A1 -E "Function (compute_k_terms|overlap_k_terms|ws_k_terms)" | grep -E "Function|REG" | paste - - |
      sed -E 's/ +/ /g' | cut -c1-160
    # Per kernel, sm_90 code only: the arithmetic and memory instructions.
    for f in "$OUT"/sweep-kernels.sass "$OUT"/addmul_kernels.cu.o.sass "$OUT"/dmma_kernels.cu.o.sass; do
      [ -f "$f" ] || continue
      awk '/code for sm_/{sm90 = ($0 ~ /sm_90/)}
           /Function :/{fn=$3}
           sm90 && /^ +\/\*[0-9a-f]+\*\//{
             op=$2; if (op ~ /^@/) op=$3; sub(/;$/,"",op)
             if (op ~ /^(FADD|FMUL|FFMA|DADD|DMUL|DFMA|HADD2|HMUL2|HFMA2|DMMA|LDGSTS|LDGDEPBAR|DEPBAR|LDS|STG|LDG|LDL|STL|BAR|WARPSYNC|UBLKCP|SYNCS)/)
               c[fn " " op]++ }
           END{for (k in c) print k, c[k]}' "$f" | c++filt | sed -E 's/roofline::ceilings::gpu::|\(anonymous namespace\):://g' |
        sort | cut -c1-150
    done
  } >"$OUT/sass-summary.txt" 2>&1
  grep -E "^(compute_k_terms|overlap_k_terms|ws_k_terms)" "$OUT/sass-summary.txt" | grep -E "HADD2|HMUL2|HFMA2|FADD|FMUL|FFMA|DADD|DMUL" | head -60
  grep -E "addmul_kernel" "$OUT/sass-summary.txt" | grep -E "HADD2|HMUL2|HFMA2|FADD|FMUL|DADD|DMUL" | cut -c1-120 | head -20
else
  echo "no cuobjdump on this machine: the SASS check will say it was not done"
fi

echo "== GPU tests ($(elapsed))"
if [[ -x "$B/bin/roofline_gpu_tests" ]]; then
  "$B/bin/roofline_gpu_tests" --gtest_filter='SweepGpu*:SweepWsGpu*:CeilingKernels.Addmul*:CeilingKernels.Dmma*' \
    >"$OUT/gpu-tests.txt" 2>&1 || status=1
  grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[ +OK|Failure|expected|^SASS|^ws fp32' "$OUT/gpu-tests.txt" | head -60
else
  echo "FAIL no roofline_gpu_tests in $B/bin"; status=1
fi

echo "== roofline ceilings --quick --device gpu ($(elapsed))"
c0=$(date +%s.%N)
"$R" ceilings --quick --device gpu >"$OUT/ceilings.txt" 2>"$OUT/ceilings.err"
crc=$?
cwall=$(awk -v a="$c0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}')
grep -E "^ +(dram\.(copy|latency|bytes_in_flight)|fp(16|32|64)\.cuda|bf16\.cuda|fp64\.tensor)" "$OUT/ceilings.err" | head -20
grep -E "note: (fp64.tensor|add\+multiply)" "$OUT/ceilings.txt" | head -5
grep -E "warning|FAILED" "$OUT/ceilings.err" | head -10
[ "$crc" -eq 0 ] || status=1

echo "== sweep: 5 variants x (seed, overlap, ws) ($(elapsed))"
"$R" sweep --device gpu --variants fp32,fma,fp64,fp16,bf16 --kernel seed,overlap,ws --csv-out "$OUT/sweep.csv" \
  >"$OUT/sweep.txt" 2>"$OUT/sweep.err"
src=$?
if [ "$src" -ne 0 ]; then echo "FAIL roofline sweep exited $src:"; tail -n 20 "$OUT/sweep.err"; status=1; fi
grep -E "^(warning|note):" "$OUT/sweep.txt" | grep -vE "wrote " | cut -c1-400 | head -30
grep -E "^  note: (SASS|peak|Little|no overlap)" "$OUT/sweep.txt" | sort -u | cut -c1-500 | head -50

echo "== charts ($(elapsed))"
"$R" chart --device gpu --out "$OUT/charts" >"$OUT/charts.txt" 2>&1 || { echo "FAIL roofline chart"; status=1; }
tail -n 3 "$OUT/charts.txt"

nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv \
  >"$OUT/nvidia-smi-after.csv" 2>&1 || true

echo "== targets ($(elapsed))"
python3 - "$OUT" "$crc" "$cwall" "$src" <<'PY'
import json, os, sqlite3, sys
out, crc, cwall, src = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
print(("PASS" if crc == 0 and cwall < 60 else "MISS") +
      f" roofline ceilings --quick --device gpu: {cwall:.1f} s (< 60 s), exit code {crc}")
db = os.path.join(out, "roofline.db")
if not os.path.exists(db):
    print("FAIL no roofline.db: nothing was stored"); sys.exit(0)
con = sqlite3.connect(db)
def latest(name):
    r = con.execute("SELECT value FROM measurements WHERE category='ceiling' AND name=? ORDER BY id DESC LIMIT 1",
                    (name,)).fetchone()
    return r[0] if r else None
for n in ("dram.copy", "fp32.cuda", "fp32.cuda.addmul", "fp64.cuda", "fp64.cuda.addmul", "fp16.cuda",
          "fp16.cuda.addmul", "bf16.cuda", "bf16.cuda.addmul", "fp64.tensor", "dram.bytes_in_flight", "dram.latency"):
    v = latest(n)
    unit = "B" if "in_flight" in n else "s" if "latency" in n else "B/s" if n.startswith("dram") else "FLOP/s"
    print(f"  ceiling {n:<22} " + ("-" if v is None else f"{v:.4g} {unit}"))
f64 = latest("fp64.tensor")
if f64: print(("PASS" if f64 >= 0.8 * 66.9e12 else "MISS") + f" fp64.tensor {f64/1e12:.1f} TFLOP/s (first run, m8n8k4: 33.2; datasheet 66.9)")
run = con.execute("SELECT MAX(run_id) FROM measurements WHERE category='sweep'").fetchone()[0]
if run is None:
    print("FAIL no sweep points stored"); sys.exit(0)
rows = []
for name, value, params in con.execute(
        "SELECT name, value, params FROM measurements WHERE category='sweep' AND run_id=? ORDER BY id", (run,)):
    p = json.loads(params)
    rows.append(p)
variants = ["fp32", "fma", "fp64", "fp16", "bf16"]
judged = ["overlap", "ws"]
ok = {kn: 0 for kn in judged}; total = {kn: 0 for kn in judged}
per_variant = {}
judged_ratio = {}
for kn in judged:
    for v in variants:
        for p in [r for r in rows if r.get("variant") == v and r.get("kernel") == kn]:
            r = p.get("ratio_to_predicted", 0.0)
            good = 0.9 <= r <= 1.1 and p["check"]["mismatches"] == 0 and p["check"]["nonfinite"] == 0
            ok[kn] += good; total[kn] += 1
            per_variant.setdefault((kn, v), []).append((p["k"], r, good))
            judged_ratio[(kn, v, p["k"])] = r
            clock = p.get("clock_mhz", 0) or 0
            print(f"{'PASS' if good else 'MISS'} {v:<4} {kn:<7} k={p['k']:<5} ratio {r:.3f}  "
                  f"{p['gflops']:>9.1f} GFLOP/s of {p['predicted_gflops']:>9.1f} predicted  "
                  f"({p['bandwidth_gbs']:.0f} GB/s; t_mem {p['t_mem_s']*1e6:.1f} us, t_comp {p['t_comp_s']*1e6:.1f} us; "
                  f"SM {clock:.0f} MHz)"
                  + ("" if p["check"]["mismatches"] == 0 and p["check"]["nonfinite"] == 0 else "  OUTPUT CHECK FAILED"))
for v in variants:
    seed = [r for r in rows if r.get("variant") == v and r.get("kernel") == "seed"]
    if not seed: continue
    ratios = [r["ratio_to_predicted"] for r in seed]
    # Nearest the ridge: where t_mem and t_comp are closest.
    bal = [r for r in seed if r.get("t_mem_s", 0) > 0 and r.get("t_comp_s", 0) > 0]
    ridge = max(bal, key=lambda r: min(r["t_mem_s"], r["t_comp_s"]) / max(r["t_mem_s"], r["t_comp_s"])) if bal else None
    lo = seed[0]
    line = f"SKIP seed {v:<4} (the seed's kernel: reported, not judged) ratio {min(ratios):.2f}..{max(ratios):.2f} (k={lo['k']}: {lo['ratio_to_predicted']:.2f}, " \
           f"{lo['bandwidth_gbs']:.0f} GB/s)"
    if ridge and ridge.get("no_overlap_gflops", 0) > 0:
        line += f"; k={ridge['k']}: {ridge['gflops']:.0f} GFLOP/s vs no-overlap model {ridge['no_overlap_gflops']:.0f} " \
                f"({ridge['gflops']/ridge['no_overlap_gflops']:.2f}x) and roofline {ridge['predicted_gflops']:.0f}"
    if lo.get("bytes_in_flight_per_sm"):
        line += f"; {lo['bytes_in_flight_per_sm']/1024:.1f} KiB/SM in flight"
        bif = latest("dram.bytes_in_flight")
        if bif: line += f" vs {bif/132/1024:.1f} KiB/SM needed at the unloaded latency"
    print(line)
# ws against overlap at the ridge, point by point (the ws kernel's purpose).
for v in variants:
    both = [(k, judged_ratio[("overlap", v, k)], judged_ratio[("ws", v, k)]) for k in (20, 50, 100, 200)
            if ("overlap", v, k) in judged_ratio and ("ws", v, k) in judged_ratio]
    if both:
        print(f"RIDGE {v:<4} ws vs overlap: " + ", ".join(f"k={k} {w:.2f} (overlap {o:.2f})" for k, o, w in both))
for kn in judged:
    for v in variants:
        ks = per_variant.get((kn, v), [])
        if not ks: print(f"MISS {v} {kn}: no points"); continue
        bad = [f"k={k} {r:.2f}" for k, r, g in ks if not g]
        print(f"{'PASS' if not bad else 'MISS'} {v} {kn}: {len(ks) - len(bad)}/{len(ks)} within 0.9-1.1"
              + ("" if not bad else " (outside: " + ", ".join(bad) + ")"))
for kn in judged:
    print(f"{'PASS' if total[kn] and ok[kn] == total[kn] else 'MISS'} {kn} kernels: {ok[kn]}/{total[kn]} points "
          f"within 0.9-1.1 of predicted" + ("" if src == 0 else f"; roofline sweep exited {src}"))
PY
echo "== done in $(elapsed)"
exit $status
