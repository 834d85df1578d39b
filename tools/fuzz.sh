#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/CMakeLists.txt) with clang-14 in build-san
# (tools/san_build.sh) and runs each for SECONDS (default 60) on a copy of its
# corpus. Exits non-zero on the first finding; the input is kept in
# build-san/findings/.
#   tools/fuzz.sh [SECONDS] [TARGET...]      e.g. tools/fuzz.sh 600 profile_fuzzer
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(idx_fuzzer profile_fuzzer kernel_name_fuzzer cli_fuzzer store_fuzzer safetensors_fuzzer jpeg_folder_fuzzer
                                    bert_config_fuzzer tokenizer_fuzzer)
source tools/san_build.sh
san_configure
cmake --build build-san --target "${targets[@]}"
mkdir -p build-san/findings
for t in "${targets[@]}"; do
  corpus=fuzz/corpus/${t%_fuzzer}
  work=$(mktemp -d)
  [[ -d $corpus ]] && cp -r "$corpus"/. "$work"/
  echo "== $t: ${seconds}s"
  # -rss_limit_mb: a reader that allocates without limit is a finding too.
  if ! ./build-san/bin/"$t" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
       -artifact_prefix=build-san/findings/"$t"- "$work" 2>build-san/"$t".log; then
    tail -40 build-san/"$t".log
    echo "FAIL: $t found an input that breaks it (build-san/findings/)" >&2
    rm -rf "$work"
    exit 1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" build-san/"$t".log | tr '\n' ' '
  echo
  rm -rf "$work"
done
echo "fuzzing: no findings"
