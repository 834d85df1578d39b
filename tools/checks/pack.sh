#!/usr/bin/env bash
# Packs what the GPU checks need into .carry/ (ignored by git; name it in the
# device tool's `carry`): the stripped binaries and libraries of ./build (or
# the build folder given) as .carry/dist.tar.xz, the objects and archives the
# checks disassemble, and the Fashion-MNIST files as .carry/fashion-mnist/.
# tools/checks/run.sh unpacks it on the GPU machine (tools/checks/README.md).
#   tools/checks/pack.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
mkdir -p .carry/fashion-mnist
cp -u /usr/share/datasets/fashion-mnist/*.gz .carry/fashion-mnist/ 2>/dev/null || true
stage=$(mktemp -d)
mkdir -p "$stage/bin" "$stage/lib"
for f in "$build"/bin/*; do [[ -f $f && -x $f ]] && cp "$f" "$stage/bin/"; done
if [[ -d $build/lib ]]; then cp -r "$build"/lib/. "$stage/lib/"; fi
# Shared libraries the GPU machine lacks (docs/gpu-machine.md): oneDNN
# (libdnnl-dev, about 7 MB packed) and the OpenCL loader it links (never used:
# roofline asks oneDNN for its CPU engine only). run.sh unpacks them into
# build/lib, which device_env.sh puts on LD_LIBRARY_PATH.
for soname in libdnnl.so.2 libOpenCL.so.1; do
  path=$(ldd "$build/bin/roofline" | awk -v s="$soname" '$1 == s { print $3 }')
  if [[ -z $path || ! -f $path ]]; then
    echo "pack.sh: $build/bin/roofline does not link $soname (build with tools/install-deps.sh's packages)" >&2
    exit 1
  fi
  cp -L "$path" "$stage/lib/$soname"
done
[[ -d $build/programs ]] && { mkdir -p "$stage/programs"; cp -r "$build"/programs/. "$stage/programs/"; }
if [[ -d $build/tests/programs ]]; then  # test programs the checks run
  mkdir -p "$stage/tests/programs"
  find "$build/tests/programs" -maxdepth 1 -type f -perm -u+x -exec cp {} "$stage/tests/programs/" \;
fi
# Objects and archives the checks disassemble (cuobjdump is only there).
(cd "$build" && find CMakeFiles/roofline_lib.dir/src/ceilings CMakeFiles/roofline_lib.dir/src/measure CMakeFiles/roofline_sweep_kernels.dir CMakeFiles/roofline_sm90a.dir tests -maxdepth 6 \
   \( -name '*.cu.o' -o -name '*.a' \) 2>/dev/null) | while read -r f; do
  mkdir -p "$stage/$(dirname "$f")"; cp "$build/$f" "$stage/$f"; done
find "$stage/bin" "$stage/lib" "$stage/tests/programs" -type f \( -perm -u+x -o -name '*.so' \) -exec strip --strip-unneeded {} + 2>/dev/null || true
tar -C "$stage" -cJf .carry/dist.tar.xz .
rm -rf "$stage"
du -sh .carry/dist.tar.xz .carry/fashion-mnist
