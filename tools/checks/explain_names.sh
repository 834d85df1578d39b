#!/usr/bin/env bash
# Checks `roofline explain` against the kernel names this GPU's PyTorch, cuBLAS
# and cuDNN really launch: runs a small set of ops under torch.profiler, writes
# the kernel names, decodes them all, and lists those no rule recognised.
#   in:  ./build (a roofline build), python3 with torch
#   out: $OUT/kernel_names.txt, $OUT/explain.json, $OUT/explain.txt, $OUT/unrecognised.txt
#   tools/checks/run.sh explain_names:120
set -euo pipefail
: "${OUT:?set OUT to a writable folder}"
source "$(dirname "$0")/device_env.sh"
ROOFLINE=./build/bin/roofline

python3 - "$OUT/kernel_names.txt" <<'PY'
import sys, torch
import torch.nn.functional as F
from torch.profiler import profile, ProfilerActivity

dev = "cuda"
torch.manual_seed(0)

def work():
    for tf32 in (False, True):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        a = torch.randn(1024, 512, device=dev, requires_grad=True)
        w = torch.randn(256, 512, device=dev, requires_grad=True)
        F.linear(a, w).relu().sum().backward()
        x = torch.randn(32, 64, 56, 56, device=dev, requires_grad=True)
        k = torch.randn(64, 64, 3, 3, device=dev, requires_grad=True)
        F.conv2d(x, k, padding=1).sum().backward()
    for dt in (torch.bfloat16, torch.float16):
        a = torch.randn(4096, 4096, device=dev, dtype=dt)
        b = torch.randn(4096, 4096, device=dev, dtype=dt)
        (a @ b).float().mean().item()
        torch.randn(128, 256, device=dev, dtype=dt) @ torch.randn(256, 8, device=dev, dtype=dt)
        q = torch.randn(8, 16, 1024, 64, device=dev, dtype=dt, requires_grad=True)
        F.scaled_dot_product_attention(q, q, q, is_causal=True).sum().backward()
    # Small-batch MLP training step as in seed 000 (FP32, SGD, cross entropy).
    m = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 512), torch.nn.ReLU(),
                            torch.nn.Linear(512, 10)).to(dev)
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    for _ in range(3):
        xb = torch.randn(128, 1, 28, 28).to(dev)
        yb = torch.randint(0, 10, (128,)).to(dev)
        loss = F.cross_entropy(m(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss.item()
    adam = torch.optim.Adam(m.parameters(), fused=True)
    F.cross_entropy(m(xb), yb).backward(); adam.step()
    bn = torch.nn.BatchNorm2d(64).to(dev); ln = torch.nn.LayerNorm(512).to(dev)
    bn(torch.randn(16, 64, 32, 32, device=dev)).sum().backward()
    ln(torch.randn(64, 512, device=dev, requires_grad=True)).sum().backward()
    F.max_pool2d(torch.randn(16, 64, 32, 32, device=dev), 2)
    torch.cat([torch.randn(100, device=dev), torch.randn(50, device=dev)])
    torch.sort(torch.randn(100000, device=dev))
    F.dropout(torch.randn(1000, device=dev), 0.5)
    torch.cuda.synchronize()

work()  # warm-up: autotuning kernels stay out of the profile
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    work()
names = sorted({e.key for e in prof.key_averages() if e.device_type == torch.autograd.DeviceType.CUDA
                and not e.key.startswith("Memcpy") and not e.key.startswith("Memset")})
with open(sys.argv[1], "w") as f:
    f.write("\n".join(names) + "\n")
print(f"{len(names)} kernel names ({torch.__version__}, {torch.cuda.get_device_name()})")
PY

"$ROOFLINE" --json explain --full --summary --from-file "$OUT/kernel_names.txt" > "$OUT/explain.json"
"$ROOFLINE" explain --from-file "$OUT/kernel_names.txt" > "$OUT/explain.txt"
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
j = json.load(open(f"{out}/explain.json"))
rows = j["tables"][0]["rows"]
bad = [r["name"] for r in rows if r["library"] == "not recognised"]
open(f"{out}/unrecognised.txt", "w").write("\n".join(bad) + "\n")
print(f"{len(rows) - len(bad)} of {len(rows)} kernel names recognised; unrecognised in unrecognised.txt:")
for n in bad:
    print("  ", n)
PY
