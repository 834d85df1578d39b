#!/usr/bin/env bash
# The CPU test suite under AddressSanitizer and UBSan: a CPU-only build with
# clang-14 in build-san (the fuzz targets build in the same folder, see
# tools/fuzz.sh), then every test. Any sanitizer report fails its test.
#   tools/sanitize.sh [ctest arguments...]     e.g. tools/sanitize.sh -R Idx
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/san_build.sh
san_configure
cmake --build build-san --target roofline roofline_tests
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
ctest --test-dir build-san --output-on-failure -j2 "$@"
