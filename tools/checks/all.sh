#!/usr/bin/env bash
# Every GPU check of tools/checks/README.md, in groups that each fit one device
# call (the device tool stops a command at 10 minutes). On the GPU machine:
#   tools/checks/all.sh GROUP     one group through tools/checks/run.sh, with CALL_S=570:
#                                 a check that would run past the call is skipped and named
#   tools/checks/all.sh list      the groups and their checks (runs nothing)
#   tools/checks/all.sh all       every group in one go, no call budget (about 35 minutes:
#                                 for a machine without the device tool's 10-minute limit)
# Groups, in the order to run them (estimates on the H100; tools/checks/README.md has what was recorded):
#   gpu         what the GPU is, the whole GPU test suite, the sweep, the ceilings, the main job
#   profiler    counters against ncu, the profiler's tests and overhead, counters on PyTorch
#   engine      the engine's GPU tests, then the batch-1 and ece408 benches beside PyTorch
#   engine-small  simple-mlp and simple-cnn at batch 64/128 over 3 rounds beside PyTorch, the CPU
#               speed target (the two engine groups are the fifth session's split of engine.sh)
#   more        the sanitizers on the engine's kernels, op timings, explain, every command's output
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
GROUPS_IN_ORDER=(gpu profiler engine engine-small more)
group() {  # the run.sh specs (CHECK:SECONDS[:ARGS]) of a group
  case $1 in
    gpu) echo "hardware:60 gtest:300 sweep:200 ceilings:300 analyze:120" ;;
    profiler) echo "counters:300 profiler:360 torch_counters:120" ;;
    engine) echo "engine:555:gpu_tests,bench_1,bench_ece408_gpu,bench_ece408_cpu,bench_ece408_cpu128" ;;
    engine-small) echo "engine:400:bench_small engine_cpu:240" ;;
    more) echo "sanitize:420 engine:150:ops_perf explain_names:120 examples:180" ;;
    *) return 1 ;;
  esac
}
case ${1:-} in
  list)
    for g in "${GROUPS_IN_ORDER[@]}"; do printf '%-13s %s\n' "$g" "$(group "$g")"; done
    exit 0 ;;
  all)
    specs=()
    for g in "${GROUPS_IN_ORDER[@]}"; do read -r -a s <<< "$(group "$g")"; specs+=("${s[@]}"); done
    exec bash tools/checks/run.sh "${specs[@]}" ;;
  '')
    echo "usage: tools/checks/all.sh GROUP|list|all   (groups: ${GROUPS_IN_ORDER[*]})" >&2
    exit 2 ;;
esac
if [[ $# -gt 1 ]]; then
  echo "one group per call: ${#} groups do not fit the device tool's 10 minutes (run them in turn)" >&2
  exit 2
fi
if ! line=$(group "$1"); then
  echo "unknown group '$1' (groups: ${GROUPS_IN_ORDER[*]})" >&2
  exit 2
fi
read -r -a s <<< "$line"
CALL_S=${CALL_S:-570} exec bash tools/checks/run.sh "${s[@]}"
