#!/usr/bin/env python3
"""A stock PyTorch training loop of the kind users profile: torchvision's
ResNet-18 on synthetic ImageNet-shaped batches from a DataLoader with worker
processes, copied to the GPU and normalised on a side stream while the
previous step runs (kernels and copies on two streams), SGD with momentum,
for a fixed time. Nothing in it knows about roofline; the long-run profiler
check (tools/checks/busy_fraction.sh) runs it with and without
`roofline profile`.

Prints one JSON line at the end: steps, images/s over the timed part (after
--warmup steps), and the wall time.

Usage: torch_resnet_train.py [--seconds 60] [--batch 128] [--workers 8] [--warmup 20]
"""
import argparse
import json
import time

import torch
import torch.nn as nn
import torchvision


class Synthetic(torch.utils.data.Dataset):
    """Random images and labels, made in the workers like decoded JPEGs."""

    def __init__(self, n, size=224):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randint(0, 256, (3, self.size, self.size), dtype=torch.uint8, generator=g), i % 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--warmup", type=int, default=20)
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda")
    model = torchvision.models.resnet18().to(dev).to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    loss_fn = nn.CrossEntropyLoss()
    loader = torch.utils.data.DataLoader(Synthetic(1 << 30), batch_size=a.batch, num_workers=a.workers,
                                         pin_memory=True, shuffle=False, persistent_workers=True, prefetch_factor=4)
    mean = torch.tensor([0.485, 0.456, 0.406], device=dev).view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device=dev).view(1, 3, 1, 1) * 255
    side = torch.cuda.Stream()

    def to_gpu(batch):
        x, y = batch
        with torch.cuda.stream(side):
            x = x.to(dev, non_blocking=True).float().sub_(mean).div_(std).contiguous(memory_format=torch.channels_last)
            y = y.to(dev, non_blocking=True)
        return x, y

    it = iter(loader)
    nxt = to_gpu(next(it))
    steps, t_start, timed_from = 0, time.time(), None
    while True:
        torch.cuda.current_stream().wait_stream(side)
        x, y = nxt
        x.record_stream(torch.cuda.current_stream())
        y.record_stream(torch.cuda.current_stream())
        nxt = to_gpu(next(it))  # the next batch's copy and normalisation overlap this step
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        steps += 1
        if steps == a.warmup:
            torch.cuda.synchronize()
            timed_from = time.time()
        if time.time() - t_start >= a.seconds and steps > a.warmup:
            break
    torch.cuda.synchronize()
    t_end = time.time()
    timed = steps - a.warmup
    print(json.dumps({"steps": steps, "images_per_s": timed * a.batch / (t_end - timed_from),
                      "wall_s": t_end - t_start, "loss": float(loss)}), flush=True)


if __name__ == "__main__":
    main()
