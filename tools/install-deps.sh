#!/usr/bin/env bash
# Installs the Debian 12 packages roofline builds and tests with, skipping any
# already present. Runs apt-get as root (directly, or through sudo).
#   --test   also what the tests need (headless Chromium for the chart test; gdb, for the
#            stacks of a command that hangs in a CLI test; clang-14 with
#            libFuzzer and libomp for tools/sanitize.sh and tools/fuzz.sh)
set -euo pipefail
pkgs=(cmake ninja-build g++ pkg-config ccache libsqlite3-dev zlib1g-dev
      nlohmann-json3-dev libcli11-dev libfmt-dev libgtest-dev libdnnl-dev libturbojpeg0-dev dataset-fashion-mnist)
if [[ "${1:-}" == "--test" ]]; then
  pkgs+=(chromium sqlite3 gdb clang-14 libclang-rt-14-dev libomp-14-dev)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [[ ! -x /usr/local/cuda/bin/nvcc ]] && ! command -v nvcc >/dev/null; then
  echo "note: no CUDA toolkit found; building the CPU-only roofline (GPU commands will say so)." >&2
fi
