#!/usr/bin/env python3
"""A stock PyTorch training script: a small CNN (two conv/ReLU/max-pool blocks
and two linear layers) trained with Adam for a few hundred steps on
Fashion-MNIST (the gzip IDX files in ./.carry/fashion-mnist when they are
there) or on random images of the same shape. Nothing in it knows about
roofline; `roofline profile -- python3 torch_cnn_train.py` profiles it.

It marks its phases with NVTX (torch.cuda.nvtx, plain PyTorch API) as
train/step/{data,forward,backward,optimizer}, so the profile maps every kernel
to its phase; --no-nvtx runs it without them.

Usage: torch_cnn_train.py [--steps 300] [--batch 64] [--data DIR] [--no-nvtx] [--device cuda]
"""
import argparse
import contextlib
import gzip
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc1 = nn.Linear(32 * 7 * 7, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):  # x: (batch, 1, 28, 28)
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)  # (batch, 16, 14, 14)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)  # (batch, 32, 7, 7)
        x = F.relu(self.fc1(x.flatten(1)))          # (batch, 128)
        return self.fc2(x)                          # (batch, 10)


def read_idx(path):
    with gzip.open(path, "rb") as f:
        magic = struct.unpack(">I", f.read(4))[0]
        dims = [struct.unpack(">I", f.read(4))[0] for _ in range(magic & 0xFF)]
        return np.frombuffer(f.read(), dtype=np.uint8).reshape(dims)


def load_data(folder, n_random=60000):
    images = os.path.join(folder, "train-images-idx3-ubyte.gz")
    labels = os.path.join(folder, "train-labels-idx1-ubyte.gz")
    if os.path.exists(images) and os.path.exists(labels):
        x = torch.from_numpy(read_idx(images).astype(np.float32) / 255.0).unsqueeze(1)
        y = torch.from_numpy(read_idx(labels).astype(np.int64))
        return x, y, "Fashion-MNIST"
    g = torch.Generator().manual_seed(int(time.time()))
    return torch.rand(n_random, 1, 28, 28, generator=g), torch.randint(0, 10, (n_random,), generator=g), "random images"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--data", default="./.carry/fashion-mnist")
    ap.add_argument("--no-nvtx", action="store_true")
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("torch_cnn_train: no CUDA device", file=sys.stderr)
        return 2
    dev = torch.device(args.device)

    def rng(name):
        if args.no_nvtx or dev.type != "cuda":
            return contextlib.nullcontext()
        return torch.cuda.nvtx.range(name)

    x_all, y_all, source = load_data(args.data)
    model = SmallCNN().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    n = x_all.shape[0]
    t0 = time.perf_counter()
    running = 0.0
    with rng("train"):
        for step in range(args.steps):
            with rng("step"):
                with rng("data"):
                    i = (step * args.batch) % (n - args.batch)
                    x = x_all[i:i + args.batch].to(dev)  # pageable host memory, as in most scripts
                    y = y_all[i:i + args.batch].to(dev)
                with rng("forward"):
                    loss = F.cross_entropy(model(x), y)
                with rng("backward"):
                    opt.zero_grad()
                    loss.backward()
                with rng("optimizer"):
                    opt.step()
                running += loss.item()  # a blocking read-back every step, as in most scripts
    if dev.type == "cuda":
        torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    print(f"torch_cnn_train: {args.steps} steps of {args.batch} ({source}) in {dt:.2f} s, "
          f"mean loss {running / max(args.steps, 1):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
