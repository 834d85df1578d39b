#!/usr/bin/env python3
"""Golden values of torchvision's alexnet and resnet18 for roofline's tests.

Both sides start from the same weights without sharing a file of them: every
tensor of the state_dict is drawn from a counter-based hash (splitmix64 of the
tensor's index and the element's), which tests/support/golden_init.cpp computes
the same way. The input batch and labels come from the same hash. The script
writes, per model and precision, one safetensors file with:
  eval_logits          (B, C) eval mode (running statistics), no grad
  logits, loss         (B, C), (1) training mode (batch statistics) forward
  grad_norm.<param>    (1)     the L2 norm of the parameter's gradient
  grad_sample.<param>  (S)     S = min(numel, 512) entries at j = floor(k·numel/S)
  after.<bn>.running_mean / running_var   after the training forward
Precisions: fp64 (the model and batch in float64: the reference roofline's fp32
is held to, since PyTorch's own fp32 differs from it by up to ~1e-3 in the
gradients of the full-size models), fp32 (TF32 off on matmuls and cuDNN) and
bf16 (autocast, channels-last): the bf16 check holds roofline's bf16 to twice
PyTorch's own bf16 difference from fp64, tensor by tensor. Metadata: torch
version, batch, size, precision, and each file's difference from fp64 (logits,
the largest and median gradient). AlexNet's dropout is set to p=0 (masks cannot
match).

Usage: python3 peers/golden_nets.py --out DIR [--size 64 --batch 2] [--models alexnet,resnet18]
       [--precisions fp32,bf16] [--device cuda|cpu]
"""
import argparse
import json
import os
import struct
import sys

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
    import torchvision
except ImportError as e:
    print(f"golden_nets: needs numpy, torch and torchvision: {e}", file=sys.stderr)
    sys.exit(3)

M64 = (1 << 64) - 1


def hash_uniform(stream, n, lo, hi):
    """lo + (hi − lo)·u, u = (splitmix64(stream·2^32 + i) >> 40) / 2^24: exact in float32."""
    z = (np.arange(n, dtype=np.uint64) + np.uint64((stream << 32) & M64)) * np.uint64(1)
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    u = (z >> np.uint64(40)).astype(np.float64) / float(1 << 24)
    return (lo + (hi - lo) * u).astype(np.float32)


def golden_state(model):
    """The hash-drawn state_dict (same rule as tests/support/golden_init.cpp)."""
    sd = model.state_dict()
    out = {}
    index = 0
    for name, t in sd.items():
        if name.endswith("num_batches_tracked"):
            continue
        n = t.numel()
        if name.endswith("running_mean"):
            lo, hi = -0.2, 0.2
        elif name.endswith("running_var"):
            lo, hi = 0.5, 1.5
        elif t.dim() == 1 and ("bn" in name or "downsample.1" in name):
            lo, hi = (0.5, 1.5) if name.endswith("weight") else (-0.2, 0.2)
        elif t.dim() == 4:
            fan_in = t.shape[1] * t.shape[2] * t.shape[3]
            b = (6.0 / fan_in) ** 0.5
            lo, hi = -b, b
        else:  # linear weights and biases
            fan_in = t.shape[1] if t.dim() == 2 else sd[name[:-len("bias")] + "weight"].shape[1]
            b = 1.0 / fan_in ** 0.5
            lo, hi = -b, b
        out[name] = torch.from_numpy(hash_uniform(index, n, lo, hi).reshape(tuple(t.shape)))
        index += 1
    return out


def golden_batch(batch, size, classes):
    x = torch.from_numpy(hash_uniform(1 << 20, batch * 3 * size * size, -1.7, 1.7).reshape(batch, 3, size, size))
    y = torch.tensor([(7 * i + 3) % classes for i in range(batch)], dtype=torch.int64)
    return x, y


def sample(g):
    flat = g.reshape(-1).float()
    n = flat.numel()
    s = min(n, 512)
    idx = torch.tensor([k * n // s for k in range(s)], dtype=torch.int64, device=flat.device)
    return flat[idx]


def run(model_name, precision, batch, size, classes, device):
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    model = getattr(torchvision.models, model_name)(num_classes=classes)
    if model_name == "alexnet":
        for m in model.modules():
            if isinstance(m, torch.nn.Dropout):
                m.p = 0.0
    state = golden_state(model)
    model.load_state_dict(state, strict=False)
    model = model.to(device)
    if precision == "fp64":
        model = model.double()
    bf16 = precision == "bf16"
    fmt = torch.channels_last if bf16 and device == "cuda" else torch.contiguous_format
    model = model.to(memory_format=fmt)
    x, y = golden_batch(batch, size, classes)
    x, y = x.to(device).to(memory_format=fmt), y.to(device)
    if precision == "fp64":
        x = x.double()
    amp = torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=bf16)
    out = {}
    model.eval()
    with torch.no_grad(), amp:
        out["eval_logits"] = model(x).float()
    model.train()
    with amp:
        logits = model(x)
        loss = F.cross_entropy(logits if precision == "fp64" else logits.float(), y)
    loss.backward()
    out["logits"] = logits.float().detach()
    out["loss"] = loss.detach().reshape(1)
    for name, p in model.named_parameters():
        out["grad_norm." + name] = p.grad.float().norm().reshape(1)
        out["grad_sample." + name] = sample(p.grad)
    for name, b in model.named_buffers():
        if "running" in name:
            out["after." + name] = b.detach().float()
    return {k: v.detach().cpu().contiguous().float() for k, v in out.items()}


def rel(a, b):
    return float((a - b).norm() / max(float(b.norm()), 1e-30))


def write_safetensors(path, tensors, metadata):
    header = {"__metadata__": {k: str(v) for k, v in metadata.items()}}
    blobs, offset = [], 0
    for name, t in tensors.items():
        data = t.numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="alexnet,resnet18")
    ap.add_argument("--precisions", default="fp64,fp32", help="fp64 first: the others are compared with it")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--classes", type=int, default=1000)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for model in a.models.split(","):
        ref = None
        for precision in a.precisions.split(","):
            t = run(model, precision, a.batch, a.size, a.classes, a.device)
            meta = {"torch": torch.__version__, "model": model, "precision": precision, "batch": a.batch,
                    "size": a.size, "classes": a.classes, "device": a.device}
            if precision == "fp64":
                ref = t
            elif ref is not None:
                meta["vs_fp64.logits"] = rel(t["logits"], ref["logits"])
                meta["vs_fp64.eval_logits"] = rel(t["eval_logits"], ref["eval_logits"])
                g = [rel(t[k], ref[k]) for k in t if k.startswith("grad_sample.")]
                meta["vs_fp64.grads_max"] = max(g)
                meta["vs_fp64.grads_median"] = sorted(g)[len(g) // 2]
            path = os.path.join(a.out, f"golden-{model}-{precision}-{a.size}.safetensors")
            write_safetensors(path, t, meta)
            print(f"golden_nets: wrote {path} ({json.dumps(meta)})", file=sys.stderr)


if __name__ == "__main__":
    main()
