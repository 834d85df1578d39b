# Sourced by tools/sanitize.sh and tools/fuzz.sh: one clang-14 configuration in
# build-san serves the sanitized CPU suite and the fuzz targets, so the library
# is built once for both.
san_configure() {
  command -v clang++-14 >/dev/null || {
    echo "needs clang-14, libclang-rt-14-dev and libomp-14-dev (tools/install-deps.sh --test)" >&2
    exit 2
  }
  # -O1 with line tables only: sanitizer reports keep file and line, and the
  # build takes about half the time of -O2 -g (2 cores in CI).
  CC=clang-14 CXX=clang++-14 cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
    -DROOFLINE_CUDA=OFF -DROOFLINE_SANITIZE=ON -DROOFLINE_FUZZ=ON -DROOFLINE_TESTS=ON >/dev/null
}
