#!/usr/bin/env bash
# GPU-machine run for `roofline ceilings` (the build is at ./build, $OUT is a
# writable folder whose files come back).
#
#   tools/checks/run.sh ceilings:300[:STAGE,STAGE...]
#   tools/checks/ceilings.sh [all|tests|sass|quick|full|ncu]...   (default: all)
#
#   tests  the GPU tests of the ceilings area (kernels vs host references, the
#          add+multiply kernels vs a host replay, every DMMA shape vs a CPU
#          product, the wgmma check mode for every precision and layout, the
#          CLI storing figures)
#   sass   registers/spills and the instructions in the built kernels (cuobjdump)
#   quick  `roofline ceilings --quick --device gpu`, timed (target: < 60 s)
#   full   `roofline ceilings --device gpu`, timed (target: < 5 min)
#   ncu    a cross-check of one DRAM read kernel's bytes with Nsight Compute
#
# Ends with the targets as PASS/MISS lines with their numbers (from the full run
# when it ran, else from the quick run). Each stage fits one 10-minute call. On
# the H100 `--quick` took 4.2 s and the full run 20.6 s (2026-11-24, docs/results-h100.md);
# the whole script's time was not recorded.
set -u
OUT=${OUT:-/tmp/roofline-ceilings}
mkdir -p "$OUT"
BIN=./build/bin
source "$(dirname "$0")/device_env.sh"
export PATH=/usr/local/cuda/bin:$PATH
STAGES=("$@")
[ ${#STAGES[@]} -eq 0 ] && STAGES=(all)
want() { for s in "${STAGES[@]}"; do [ "$s" = all ] || [ "$s" = "$1" ] && return 0; done; return 1; }
say() { echo "== $*"; }

nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu,pstate \
  --format=csv > "$OUT/gpu-state-before.csv" 2>&1 || true
cat "$OUT/gpu-state-before.csv"

if want tests; then
  say "GPU tests (ceilings)"
  start=$(date +%s.%N)
  "$BIN/roofline_gpu_tests" --gtest_filter='CeilingKernels.*:WgmmaKernels.*:CeilingsCliGpu.*' \
    > "$OUT/gpu-tests.log" 2>&1
  rc=$?
  echo "rc=$rc in $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}') s" | tee -a "$OUT/gpu-tests.log"
  grep -E "^\[( +OK|  FAILED|  SKIPPED|  PASSED) |Failure|expected|error" "$OUT/gpu-tests.log" | head -60
fi

if want sass; then
  say "registers, spills, instructions (cuobjdump -sass)"
  {
    for obj in build/CMakeFiles/roofline_sm90a.dir/src/ceilings/gpu/wgmma_sm90a.cu.o \
               build/CMakeFiles/roofline_lib.dir/src/ceilings/gpu/fma_kernels.cu.o \
               build/CMakeFiles/roofline_lib.dir/src/ceilings/gpu/addmul_kernels.cu.o \
               build/CMakeFiles/roofline_lib.dir/src/ceilings/gpu/memory_kernels.cu.o \
               build/CMakeFiles/roofline_lib.dir/src/ceilings/gpu/bulk_kernels.cu.o \
               build/CMakeFiles/roofline_lib.dir/src/ceilings/gpu/dmma_kernels.cu.o; do
      [ -f "$obj" ] || { echo "missing $obj"; continue; }
      echo "### $obj"
      cuobjdump -res-usage "$obj" 2>&1 | grep -E "Function|REG|STACK" | sed 's/^ *//' | paste - - | \
        c++filt | sed -E 's/roofline::(ceilings::gpu::|kernels::)//g; s/\(anonymous namespace\):://g' | cut -c1-200
      cuobjdump -sass "$obj" > "$OUT/$(basename "$obj").sass" 2>&1
      # Per kernel (sm_90 code only): the instruction mix that matters.
      awk '/code for sm_/{sm90 = ($0 ~ /sm_90/)}
           /Function :/{fn=$3}
           sm90 && /^ +\/\*[0-9a-f]+\*\//{
             op=$2; if (op ~ /^@/) op=$3; sub(/;$/,"",op)
             if (op ~ /GMMA|FFMA|DFMA|HFMA2|FADD|FMUL|DADD|DMUL|HADD2|HMUL2|DMMA|LDL|STL|LDG|STG|LDS|UBLKCP|SYNCS|BAR|WARPGROUP/) c[fn " " op]++ }
           END{for (k in c) print k, c[k]}' "$OUT/$(basename "$obj").sass" | \
        c++filt | sed -E 's/roofline::(ceilings::gpu::|kernels::)//g; s/\(anonymous namespace\):://g' | sort | cut -c1-160
    done
  } 2>&1 | tee "$OUT/sass-summary.txt" | tail -120
fi

timed_run() {  # name, args...  (wall time by date deltas; /usr/bin/time -v adds memory when present)
  local name=$1; shift
  say "roofline $* --device gpu (timed; JSON to $OUT/$name.json)"
  local timer=()
  [ -x /usr/bin/time ] && timer=(/usr/bin/time -v -o "$OUT/$name.time")
  local start end
  start=$(date +%s.%N)
  "${timer[@]}" "$BIN/roofline" --db "$OUT/ceilings.db" --json "$@" --device gpu > "$OUT/$name.json" 2> "$OUT/$name.err"
  local rc=$?
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN{printf "%.2f\n", b - a}' > "$OUT/$name.wall"
  echo "$rc" > "$OUT/$name.rc"
  echo "rc=$rc wall $(cat "$OUT/$name.wall") s"
  [ -f "$OUT/$name.time" ] && grep -E "Maximum resident" "$OUT/$name.time"
  grep -E "error" "$OUT/$name.err" | head -20
}

if want quick; then timed_run quick ceilings --quick; fi
if want full; then timed_run full ceilings; fi

if want ncu && command -v ncu > /dev/null; then
  say "ncu cross-check: DRAM bytes of one read kernel vs the bytes the benchmark counts"
  ncu --clock-control none --kernel-name regex:read_kernel --launch-count 1 --csv \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
    "$BIN/roofline" --db "$OUT/ncu.db" --quiet ceilings --quick --device gpu --only dram.read \
    > "$OUT/ncu.csv" 2> "$OUT/ncu.err"
  echo "rc=$? (the benchmark counts 1 GiB = 1073741824 bytes read per run with --quick)"
  grep -E "dram__|gpu__time" "$OUT/ncu.csv" | cut -c1-220
fi

say "figures and targets"
python3 - "$OUT" <<'PY'
import json, os, re, sys
out = sys.argv[1]

def load(name):
    p = os.path.join(out, name + ".json")
    if not os.path.exists(p): return None
    try: return json.load(open(p))
    except Exception as e:
        print(f"MISS {name}.json is not JSON ({e}): see {name}.err"); return None

def wall(name):
    p = os.path.join(out, name + ".wall")
    try: return float(open(p).read())
    except Exception: return None

SCALE = {"TB/s": 1e12, "GB/s": 1e9, "TFLOP/s": 1e12, "GFLOP/s": 1e9, "TOP/s": 1e12, "GOP/s": 1e9}

def rows(report):
    r = {}
    for t in report.get("tables", []):
        for row in t["rows"]:
            name = row.get("ceiling") or row.get("figure")
            if name: r[name] = row
    return r

def show(report):
    for t in report.get("tables", []):
        print(f"-- {t['title']}")
        for row in t["rows"]:
            if "ceiling" in row:
                def f(x, d=3): return "-" if x is None else (f"{x:.{d}g}" if isinstance(x, float) else str(x))
                print(f"{row['ceiling']:<22} {f(row['measured']):>8} {row['unit'] or '':<8} ref {f(row['reference']):>7} "
                      f"{f(row['pct_reference'],3):>5}%  @clock {f(row['pct_peak_at_clock'],3):>5}%  "
                      f"{f(row['clock_mhz'],4):>5} MHz  thr {row['throttled'] or '-':<6} {(row['method'] or '')[:70]}")
            else:
                print(f"{row['figure']:<22} {row['value']:.4g} {row['unit']}  cycles {row['cycles']}  {(row['method'] or '')[:90]}")
        for n in t.get("notes", []): print("   note:", n)
    for w in report.get("warnings", []): print("warning:", w)

def line(ok, what): print(("PASS " if ok else "MISS ") + what)

src = "full" if load("full") else "quick"
rep = load(src)
if rep:
    print(f"(the {src} run)")
    show(rep)
    r = rows(rep)
    def val(n):
        row = r.get(n)
        if not row or row.get("measured") is None: return None
        return row["measured"] * SCALE.get(row["unit"], 1.0)
    read, copy, memcpy = val("dram.read"), val("dram.copy"), val("dram.memcpy")
    best = max([x for x in (read, copy) if x], default=None)
    if best:
        line(best >= 0.9 * 3.35e12, f"DRAM best of read/copy {best/1e12:.3f} TB/s >= 3.015 TB/s (90% of 3.35)")
        if memcpy: line(best >= memcpy, f"DRAM best {best/1e12:.3f} TB/s >= cudaMemcpy D2D {memcpy/1e12:.3f} TB/s")
    else:
        print("MISS DRAM figures missing")
    for name, target in (("fp32.cuda", 97.0), ("fp64.cuda", 95.0)):
        row = r.get(name)
        pct = row.get("pct_peak_at_clock") if row else None
        if pct is None: print(f"MISS {name}: no % of the peak at the measured clock"); continue
        line(pct >= target, f"{name} {val(name)/1e12:.2f} TFLOP/s = {pct:.1f}% of the peak at {row['clock_mhz']:.0f} MHz (>= {target}%)")
    f64 = val("fp64.tensor")
    if f64:
        line(f64 >= 0.8 * 66.9e12, f"fp64.tensor {f64/1e12:.1f} TFLOP/s >= 53.5 TFLOP/s (80% of 66.9; m8n8k4 reached 33.2 on 2026-11-22)")
    for p in ("fp64", "fp32", "fp16", "bf16"):
        am, fma = val(p + ".cuda.addmul"), val(p + ".cuda")
        if am and fma:
            print(f"     {p}.cuda.addmul {am/1e12:.1f} TFLOP/s = {am/fma:.3f} x {p}.cuda (0.5: adds and multiplies at the FMA instruction rate)")
        elif fma:
            print(f"MISS {p}.cuda.addmul missing")
    bf, lib = val("bf16.tensor"), val("bf16.tensor.cublaslt")
    if bf:
        line(bf >= 0.8 * 989e12, f"bf16.tensor {bf/1e12:.1f} TFLOP/s >= 791 TFLOP/s (80% of 989)")
        if lib: line(bf >= lib, f"bf16.tensor {bf/1e12:.1f} >= cuBLASLt {lib/1e12:.1f} TFLOP/s")
    else:
        print("MISS bf16.tensor missing")
for name, limit in (("quick", 60), ("full", 300)):
    w = wall(name)
    try: rc = int(open(os.path.join(out, name + ".rc")).read())
    except Exception: rc = None
    if w is not None:
        line(w < limit and rc == 0, f"roofline ceilings {'--quick ' if name == 'quick' else ''}wall time {w:.1f} s < {limit} s (exit code {rc})")
PY
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv \
  > "$OUT/gpu-state-after.csv" 2>&1 || true
cat "$OUT/gpu-state-after.csv"
