#!/usr/bin/env python3
"""The PyTorch peer of `roofline bench alexnet,resnet18`.

Times torchvision's alexnet and resnet18 on synthetic ImageNet-shaped batches
(like the ImageNet example's --dummy): a training step (forward, cross-entropy,
backward, torch.optim.SGD with momentum 0.9, weight decay 1e-4 and the learning
rate of torchvision's recipe for the model, --lrs) and an
inference forward in eval mode under torch.no_grad(), eager and under
torch.compile, in the precisions roofline has:
  fp32  TF32 off on matmuls and cuDNN (torch turns it on for cuDNN by default);
  tf32  TF32 on for both;
  bf16  autocast to bfloat16;
  fp16  autocast to float16 and torch.amp.GradScaler's dynamic
        loss scaling in training (its defaults, as roofline's); the record
        carries the final scale (read once, after the timed steps).
Each cell: warm-up steps, then timed steps bracketed by CUDA events (GPU) or
perf_counter (CPU), one per step; the median and the spread are printed. Peak
memory is torch.cuda.max_memory_allocated over the cell. Model and input are
contiguous (NCHW) or channels_last (NHWC) as --layouts says for the cell's
device and precision: roofline bench passes its own network's layout for each
(NHWC on the CPU and for bf16/fp16 on the GPU, unless --layout). One JSON
document on stdout; progress on stderr.

Usage (roofline bench --peer pytorch calls it like this):
  python3 peers/pytorch_nets.py --models resnet18 --devices gpu --precisions fp32,bf16 \
      --batches 1,64,128 --modes train,infer --steps 20 --warmup 5 [--compile] \
      --layouts cpu/fp32=nhwc,gpu/fp32=nchw,gpu/bf16=nhwc
Exit status 3: PyTorch or torchvision is not installed.
"""
import argparse
import json
import math
import statistics
import sys
import time


def log(*a):
    print(*a, file=sys.stderr, flush=True)


try:
    import torch
    import torch.nn.functional as F
    import torchvision
except ImportError as e:
    log(f"pytorch_nets: PyTorch/torchvision is not installed for {sys.executable}: {e}")
    sys.exit(3)


def set_precision(precision):
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True


def timer(device):
    if device == "cuda":
        def run(fn):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            return a.elapsed_time(b) * 1e-3
    else:
        def run(fn):
            t = time.perf_counter()
            fn()
            return time.perf_counter() - t
    return run


def cell(model_name, device, precision, batch, mode, steps, warmup, compiled, layout="nchw", lr=0.1, classes=1000,
         size=224):
    dev = "cuda" if device == "gpu" else "cpu"
    set_precision(precision)
    torch.manual_seed(0)
    model = getattr(torchvision.models, model_name)(num_classes=classes).to(dev)
    lowp = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    fmt = torch.channels_last if layout == "nhwc" else torch.contiguous_format
    model = model.to(memory_format=fmt)
    x = torch.randn(batch, 3, size, size, device=dev).to(memory_format=fmt)
    y = torch.randint(0, classes, (batch,), device=dev)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)
    amp = torch.autocast(device_type=dev, dtype=lowp or torch.bfloat16, enabled=lowp is not None)
    # fp16's range needs loss scaling; bf16 and fp32 run the same calls with it off.
    scaler = torch.amp.GradScaler(dev, enabled=precision == "fp16")

    def train_step(m):
        opt.zero_grad(set_to_none=True)
        with amp:
            loss = F.cross_entropy(m(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss

    def infer(m):
        with torch.no_grad(), amp:
            return m(x)

    if mode == "train":
        model.train()
        fn = train_step
    else:
        model.eval()
        fn = infer
    m = torch.compile(model) if compiled else model
    if dev == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    for _ in range(warmup):
        fn(m)
    if dev == "cuda":
        torch.cuda.synchronize()
    t = timer(dev)
    times = [t(lambda: fn(m)) for _ in range(steps)]
    peak = torch.cuda.max_memory_allocated() if dev == "cuda" else None
    loss = float(train_step(m)) if mode == "train" else None
    if loss is not None and not math.isfinite(loss):  # JSON has no NaN: the record says so instead
        loss = None
    med = statistics.median(times)
    q = statistics.quantiles(times, n=4) if len(times) >= 4 else [min(times), med, max(times)]
    rec = {
        "model": model_name, "device": device, "precision": precision, "batch": batch, "mode": mode,
        "source": "pytorch-compile" if compiled else "pytorch",
        "median_s": med, "iqr_s": q[2] - q[0], "min_s": min(times), "max_s": max(times), "steps": steps,
        "peak_bytes": peak, "loss": loss,
        "loss_scale": scaler.get_scale() if scaler.is_enabled() and mode == "train" else None,
        "torch": torch.__version__, "threads": torch.get_num_threads(), "layout": layout, "lr": lr,
    }
    del m, model, opt
    if dev == "cuda":
        torch.cuda.empty_cache()
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="resnet18")
    ap.add_argument("--devices", default="gpu")
    ap.add_argument("--precisions", default="fp32")
    ap.add_argument("--batches", default="128")
    ap.add_argument("--modes", default="train,infer")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--compile", action="store_true", help="also time torch.compile (default mode)")
    ap.add_argument("--no-eager", action="store_true")
    ap.add_argument("--lrs", default="", help="MODEL=LR,...: SGD's learning rate per model (default 0.1)")
    ap.add_argument("--layouts", default="",
                    help="DEVICE/PRECISION=nchw|nhwc,...: each cell's layout, contiguous or channels_last, as "
                         "roofline's network of that cell takes it (roofline bench passes them); default nchw")
    a = ap.parse_args()
    layouts = dict(kv.split("=", 1) for kv in a.layouts.split(",") if kv)
    lrs = {k: float(v) for k, v in (kv.split("=", 1) for kv in a.lrs.split(",") if kv)}
    if any(v not in ("nchw", "nhwc") for v in layouts.values()):
        raise SystemExit(f"pytorch_nets: --layouts takes nchw or nhwc, not {a.layouts}")
    out = []
    for model in a.models.split(","):
        for device in a.devices.split(","):
            if device == "gpu" and not torch.cuda.is_available():
                raise SystemExit("pytorch_nets: no GPU visible to PyTorch")
            for precision in a.precisions.split(","):
                if device == "cpu" and precision != "fp32":
                    continue
                for batch in [int(b) for b in a.batches.split(",")]:
                    for mode in a.modes.split(","):
                        for compiled in ([] if a.no_eager else [False]) + ([True] if a.compile else []):
                            log(f"pytorch_nets: {model} {device} {precision} batch {batch} {mode}"
                                f"{' compiled' if compiled else ''}")
                            steps = a.steps if device == "gpu" or batch == 1 else max(3, a.steps // 4)
                            out.append(cell(model, device, precision, batch, mode, steps, a.warmup, compiled,
                                            layouts.get(f"{device}/{precision}", "nchw"), lrs.get(model, 0.1)))
    json.dump({"peer": "pytorch", "records": out}, sys.stdout)


if __name__ == "__main__":
    main()
