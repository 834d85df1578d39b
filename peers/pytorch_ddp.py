#!/usr/bin/env python3
"""The data-parallel PyTorch peer of `roofline bench alexnet,resnet18 --gpus N,...` (and bert-base).

Times a DistributedDataParallel training step of torchvision's alexnet and
resnet18 (1000 classes, synthetic 224x224 batches: forward, cross-entropy,
backward with DDP's bucketed NCCL all-reduce of the gradients,
torch.optim.SGD with momentum 0.9, weight decay 1e-4 and the learning rate of
torchvision's recipe for the model, --lrs) on N GPUs of this machine, one
process per GPU (torch.multiprocessing.spawn, NCCL over tcp://127.0.0.1 on a
free port, a fresh one per N), for each N of --gpus. --batches is the batch of
each GPU; the global batch is N times it. Precisions as peers/pytorch_nets.py:
  fp32  TF32 off on matmuls and cuDNN (torch turns it on for cuDNN by default);
  tf32  TF32 on for both;
  bf16  autocast to bfloat16;
  fp16  autocast to float16 and torch.amp.GradScaler's dynamic loss scaling
        (its defaults, as roofline's); the record carries the final scale.
Every rank builds the model after torch.manual_seed(0) (DDP also broadcasts
rank 0's weights), wrapped as DDP(device_ids=[rank], bucket_cap_mb=--bucket-mb,
gradient_as_bucket_view=True), and draws its own batch (CPU generator seeded
1 + rank). Each cell: warm-up steps, a barrier, then timed steps bracketed by
CUDA events on every rank; a step takes as long as its slowest rank, so the
cell's times are the per-step maxima over ranks, and their median and spread
are printed. Peak memory is torch.cuda.max_memory_allocated of rank 0 from
after the model's creation; the loss is that of one more step after the timed
ones, averaged over ranks. Model and input are contiguous (NCHW) or
channels_last (NHWC) as --layouts says for gpu/PRECISION. NVLink multicast
(NVLS) stays off: NCCL_NVLS_ENABLE=0 unless the environment says otherwise.
One JSON document on stdout ({"peer": "pytorch-ddp", "records": [...]}, the
records of pytorch_nets.py with gpus, bucket_mb and nccl added); progress on
stderr (the ranks' stdout is sent there too).

Usage (roofline bench resnet18 --gpus 1,2 --peer pytorch calls it like this):
  python3 peers/pytorch_ddp.py --models resnet18 --precisions bf16 --batches 128 \
      --gpus 1,2 --steps 20 --warmup 5 --layouts gpu/bf16=nhwc
Under torchrun (RANK and WORLD_SIZE set) each process is one rank of the launcher's job and rank 0
prints the document; the profiler's multi-rank test runs it so:
  roofline profile -- torchrun --nproc_per_node 2 peers/pytorch_ddp.py --models resnet18 --precisions bf16
Exit status 1: a rank failed (its error on stderr); 2: --gpus asks for more
GPUs than this machine has; 3: PyTorch or torchvision is not installed.
"""
import argparse
import datetime
import json
import math
import os
import socket
import statistics
import sys
import tempfile

# The machine forbids NVLink multicast; the spawned ranks inherit these.
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    import torch.nn.functional as F
    import torchvision
    from torch.nn.parallel import DistributedDataParallel as DDP
except ImportError as e:
    log(f"pytorch_ddp: PyTorch/torchvision is not installed for {sys.executable}: {e}")
    sys.exit(3)

# What each precision means on the PyTorch side (fp32: TF32 off on matmuls and cuDNN) has one home.
from pytorch_nets import set_precision  # noqa: E402  (same folder)

TIMEOUT = datetime.timedelta(minutes=5)  # a collective stuck this long aborts its rank instead of hanging


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def nccl_version():
    import torch.cuda.nccl
    v = torch.cuda.nccl.version()  # (major, minor, patch[, suffix]); an int in old releases
    return ".".join(map(str, v)) if isinstance(v, tuple) else str(v)


def cell(rank, gpus, model_name, precision, batch, steps, warmup, layout, lr, bucket_mb, seq=128, classes=1000,
         size=224):
    set_precision(precision)
    torch.manual_seed(0)
    lowp = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    dev = torch.cuda.current_device()  # the local rank's GPU
    amp = torch.autocast(device_type="cuda", dtype=lowp or torch.bfloat16, enabled=lowp is not None)
    # fp16's range needs loss scaling; bf16 and fp32 run the same calls with it off.
    scaler = torch.amp.GradScaler("cuda", enabled=precision == "fp16")
    if model_name == "bert-base":
        # Hugging Face's BertForQuestionAnswering of bert-base-cased's shape, as peers/pytorch_bert.py's train
        # cells (attention-probability dropout off, as roofline's fused attention has none; fused AdamW), its
        # synthetic sequences of `seq` tokens drawn per rank.
        from pytorch_bert import config, make_batch, targets
        from transformers import BertForQuestionAnswering
        cfg = config("base")
        cfg.attention_probs_dropout_prob = 0.0
        model = BertForQuestionAnswering(cfg).cuda()
        ddp = DDP(model, device_ids=[dev], bucket_cap_mb=bucket_mb, gradient_as_bucket_view=True)
        lens = [seq] * batch
        ids, types, mask = make_batch(cfg, lens, rank, "cuda")
        start, end = targets(lens, "cuda")
        opt = torch.optim.AdamW(ddp.parameters(), lr=3e-5, weight_decay=0.01, fused=True)
        model_name = f"bert-base s{seq}"
        layout = "nchw"

        def forward():
            return ddp(input_ids=ids, token_type_ids=types, attention_mask=mask, start_positions=start,
                       end_positions=end).loss
    else:
        model = getattr(torchvision.models, model_name)(num_classes=classes).cuda()
        fmt = torch.channels_last if layout == "nhwc" else torch.contiguous_format
        model = model.to(memory_format=fmt)
        ddp = DDP(model, device_ids=[dev], bucket_cap_mb=bucket_mb, gradient_as_bucket_view=True)
        g = torch.Generator().manual_seed(1 + rank)  # every rank its own batch
        x = torch.randn(batch, 3, size, size, generator=g).to("cuda", memory_format=fmt)
        y = torch.randint(0, classes, (batch,), generator=g).cuda()
        opt = torch.optim.SGD(ddp.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)

        def forward():
            return F.cross_entropy(ddp(x), y)

    def train_step():
        opt.zero_grad(set_to_none=True)
        with amp:
            loss = forward()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss

    def timed():
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        train_step()
        b.record()
        b.synchronize()
        return a.elapsed_time(b) * 1e-3

    ddp.train()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    for _ in range(warmup):
        train_step()
    dist.barrier(device_ids=[dev])
    torch.cuda.synchronize()
    mine = torch.tensor([timed() for _ in range(steps)], dtype=torch.float64, device="cuda")
    peak = torch.cuda.max_memory_allocated()
    every = [torch.empty_like(mine) for _ in range(gpus)]
    dist.all_gather(every, mine)
    times = torch.stack(every).amax(0).tolist()  # a data-parallel step is as slow as its slowest rank
    loss = train_step().detach().float().clone()
    dist.all_reduce(loss, op=dist.ReduceOp.AVG)
    loss = float(loss)
    if not math.isfinite(loss):  # JSON has no NaN: the record says so instead
        loss = None
    med = statistics.median(times)
    q = statistics.quantiles(times, n=4) if len(times) >= 4 else [min(times), med, max(times)]
    rec = {
        "model": model_name, "device": "gpu", "precision": precision, "batch": batch, "mode": "train",
        "source": "pytorch-ddp",
        "median_s": med, "iqr_s": q[2] - q[0], "min_s": min(times), "max_s": max(times), "steps": steps,
        "peak_bytes": peak, "loss": loss, "loss_scale": scaler.get_scale() if scaler.is_enabled() else None,
        "torch": torch.__version__, "threads": torch.get_num_threads(), "layout": layout, "lr": lr,
        "gpus": gpus, "bucket_mb": bucket_mb, "nccl": nccl_version(),
    }
    del ddp, model, opt
    torch.cuda.empty_cache()
    return rec


def rank_main(rank, gpus, port, cells, steps, warmup, bucket_mb, path, local_rank=None, seq=128):
    if port is not None:
        os.dup2(2, 1)  # stdout carries the parent's one JSON document: whatever a rank prints goes to stderr
    torch.cuda.set_device(rank if local_rank is None else local_rank)
    init = f"tcp://127.0.0.1:{port}" if port is not None else "env://"
    dist.init_process_group("nccl", init_method=init, rank=rank, world_size=gpus, timeout=TIMEOUT)
    out = []
    for model, precision, batch, layout, lr in cells:
        if rank == 0:
            log(f"pytorch_ddp: {model} {precision} batch {batch} gpus {gpus}")
        out.append(cell(rank, gpus, model, precision, batch, steps, warmup, layout, lr, bucket_mb, seq))
    if rank == 0 and path:
        with open(path, "w") as f:
            json.dump(out, f)
    elif rank == 0:  # started by torchrun: rank 0 prints the document itself
        json.dump({"peer": "pytorch-ddp", "records": out}, sys.stdout)
    dist.barrier(device_ids=[torch.cuda.current_device()])
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="resnet18")
    ap.add_argument("--precisions", default="fp32")
    ap.add_argument("--batches", default="128", help="the batch of each GPU")
    ap.add_argument("--gpus", default="1", help="N,...: the GPU counts to time, one process per GPU")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--lrs", default="", help="MODEL=LR,...: SGD's learning rate per model (default 0.1)")
    ap.add_argument("--layouts", default="",
                    help="DEVICE/PRECISION=nchw|nhwc,...: each cell's layout, contiguous or channels_last, as "
                         "roofline's network of that cell takes it (only gpu/ entries matter); default nchw")
    ap.add_argument("--bucket-mb", type=float, default=25, help="DDP's bucket_cap_mb")
    ap.add_argument("--seq", type=int, default=128, help="bert-base: tokens per sequence")
    ap.add_argument("--port", type=int, default=0,
                    help="the rendezvous port on 127.0.0.1, the same for every N (0: a free one for each N)")
    a = ap.parse_args()
    layouts = dict(kv.split("=", 1) for kv in a.layouts.split(",") if kv)
    lrs = {k: float(v) for k, v in (kv.split("=", 1) for kv in a.lrs.split(",") if kv)}
    if any(v not in ("nchw", "nhwc") for v in layouts.values()):
        raise SystemExit(f"pytorch_ddp: --layouts takes nchw or nhwc, not {a.layouts}")
    if a.steps < 1:
        raise SystemExit("pytorch_ddp: --steps must be at least 1")
    gpu_counts = [int(n) for n in a.gpus.split(",") if n]
    if not gpu_counts or min(gpu_counts) < 1:
        raise SystemExit(f"pytorch_ddp: --gpus takes positive counts, not {a.gpus}")
    if not torch.cuda.is_available():
        raise SystemExit("pytorch_ddp: no GPU visible to PyTorch")
    have = torch.cuda.device_count()
    if max(gpu_counts) > have:
        log(f"pytorch_ddp: --gpus asks for {max(gpu_counts)} GPUs; this machine has {have}")
        sys.exit(2)
    cells = [(model, precision, int(batch), layouts.get(f"gpu/{precision}", "nchw"), lrs.get(model, 0.1))
             for model in a.models.split(",") for precision in a.precisions.split(",")
             for batch in a.batches.split(",")]
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        # Started by torchrun (or any launcher that sets its variables): this process is one rank of that
        # job, --gpus is ignored, and NCCL meets through MASTER_ADDR/MASTER_PORT (env://).
        rank_main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), None, cells, a.steps, a.warmup,
                  a.bucket_mb, None, int(os.environ.get("LOCAL_RANK", os.environ["RANK"])), a.seq)
        return
    out = []
    for n in gpu_counts:
        port = a.port or free_port()
        with tempfile.TemporaryDirectory(prefix="pytorch_ddp.") as d:
            path = os.path.join(d, "records.json")
            try:  # a rank's exception comes back here (the other ranks are terminated) instead of hanging
                mp.spawn(rank_main, args=(n, port, cells, a.steps, a.warmup, a.bucket_mb, path, None, a.seq), nprocs=n,
                         join=True)
            except Exception as e:
                raise SystemExit(f"pytorch_ddp: {n} GPU(s): {type(e).__name__}: {e}")
            with open(path) as f:
                out += json.load(f)
    json.dump({"peer": "pytorch-ddp", "records": out}, sys.stdout)


if __name__ == "__main__":
    main()
