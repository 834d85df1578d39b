#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/CMakeLists.txt) with clang and runs each
# for SECONDS (default 60) on a copy of its corpus. Exits non-zero on the first
# finding; the crashing input is kept in build-fuzz/findings/.
#   tools/fuzz.sh [SECONDS] [TARGET...]      e.g. tools/fuzz.sh 600 profile_fuzzer
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(idx_fuzzer profile_fuzzer kernel_name_fuzzer)
command -v clang++-14 >/dev/null || { echo "tools/fuzz.sh needs clang-14 and libclang-rt-14-dev (tools/install-deps.sh --test)" >&2; exit 2; }
CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DROOFLINE_CUDA=OFF -DROOFLINE_TESTS=OFF -DROOFLINE_FUZZ=ON >/dev/null
cmake --build build-fuzz --target "${targets[@]}"
mkdir -p build-fuzz/findings
for t in "${targets[@]}"; do
  corpus=fuzz/corpus/${t%_fuzzer}
  work=$(mktemp -d)
  [[ -d $corpus ]] && cp -r "$corpus"/. "$work"/
  echo "== $t: ${seconds}s"
  # -rss_limit_mb: a reader that allocates without limit is a finding too.
  if ! ./build-fuzz/bin/"$t" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
       -artifact_prefix=build-fuzz/findings/"$t"- "$work" 2>build-fuzz/"$t".log; then
    tail -40 build-fuzz/"$t".log
    echo "FAIL: $t found an input that breaks it (build-fuzz/findings/)" >&2
    rm -rf "$work"
    exit 1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" build-fuzz/"$t".log | tr '\n' ' '
  echo
  rm -rf "$work"
done
echo "fuzzing: no findings"
