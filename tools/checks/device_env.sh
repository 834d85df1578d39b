# Sourced by run.sh and the checks, from the repository root: the GPU
# machine's libraries (docs/gpu-machine.md). cuDNN and NCCL come from
# PyTorch's environment there; the build's own libraries from ./build/lib,
# and so does oneDNN (libdnnl.so.2, with the OpenCL loader it links), which
# the machine lacks and pack.sh carries.
TORCH_NVIDIA=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
export LD_LIBRARY_PATH=$TORCH_NVIDIA/cudnn/lib:$TORCH_NVIDIA/nccl/lib:$PWD/build/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
