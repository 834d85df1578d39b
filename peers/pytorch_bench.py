#!/usr/bin/env python3
"""The PyTorch peer of `roofline bench`.

Runs the same models (simple-mlp, simple-cnn, ece408), data (Fashion-MNIST IDX
files, normalised with the training set's mean and std), batch sizes, optimiser
(torch.optim.SGD with momentum and weight decay), loss (cross-entropy, i.e.
log-softmax + NLL) and initialisation scheme (PyTorch's defaults) in PyTorch
eager mode, and prints one JSON document on stdout. Progress goes to stderr.

Fair to PyTorch: the whole data set is preloaded as tensors on the device (and
resized once for ece408), so no DataLoader or host copy is timed; the loss is
accumulated on the device and read once per epoch; TF32 is off (roofline is
fp32 everywhere). Timing brackets each epoch with torch.cuda.synchronize().

Usage (roofline bench --peer pytorch calls it like this):
  python3 peers/pytorch_bench.py --models simple-mlp --devices cpu,gpu \
      --batches 1,64,128 --epochs 5 --data /usr/share/datasets/fashion-mnist
Exit status 3: PyTorch is not installed.
"""
import argparse
import gzip
import json
import os
import statistics
import struct
import sys
import time


def log(*a):
    print(*a, file=sys.stderr, flush=True)


try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:  # the caller turns exit status 3 into a clear message
    log(f"pytorch_bench: PyTorch is not installed for {sys.executable}: {e}")
    sys.exit(3)


def read_idx(path):
    """An IDX file (gzip or raw) as (dims, bytes), with the same checks as roofline's reader."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise SystemExit(f"pytorch_bench: {path}: not an unsigned-byte IDX file")
    nd = raw[3]
    dims = struct.unpack(">" + "I" * nd, raw[4:4 + 4 * nd])
    count = 1
    for d in dims:
        count *= d
    data = raw[4 + 4 * nd:]
    if len(data) != count:
        raise SystemExit(f"pytorch_bench: {path}: {len(data)} data bytes, header says {count}")
    return dims, data


def find(d, stem):
    for name in (stem + ".gz", stem, stem.replace("-idx", ".idx") + ".gz", stem.replace("-idx", ".idx")):
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    raise SystemExit(f"pytorch_bench: {d} has no {stem}(.gz)")


def load(d):
    def split(prefix):
        (n, h, w), img = read_idx(find(d, f"{prefix}-images-idx3-ubyte"))
        (m,), lab = read_idx(find(d, f"{prefix}-labels-idx1-ubyte"))
        if n != m:
            raise SystemExit(f"pytorch_bench: {n} images but {m} labels")
        x = torch.frombuffer(bytearray(img), dtype=torch.uint8).reshape(n, 1, h, w)
        y = torch.frombuffer(bytearray(lab), dtype=torch.uint8).long()
        return x, y

    return split("train"), split("t10k")


class SimpleMLP(nn.Module):  # seed 000 §2.1.1, ReLU after fc3 as in the seed
    size = 28

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(784, 256), nn.Linear(256, 128), nn.Linear(128, 10)

    def forward(self, x):
        x = x.view(-1, 784)
        return F.relu(self.fc3(F.relu(self.fc2(F.relu(self.fc1(x))))))


class SimpleCNN(nn.Module):  # seed 000 §2.1.2
    size = 28

    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 1, 5), nn.Conv2d(1, 1, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.fc1, self.fc2 = nn.Linear(16, 100), nn.Linear(100, 10)

    def forward(self, x):
        x = self.pool(self.conv2(self.pool(self.conv1(x))))
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


class ECE408(nn.Module):  # 1x86x86; conv 4@7x7, pool 2, conv 16@7x7, pool 4, FC 32, FC 10
    size = 86

    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 4, 7), nn.Conv2d(4, 16, 7)
        self.fc1, self.fc2 = nn.Linear(1024, 32), nn.Linear(32, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 4)
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


MODELS = {"simple-mlp": SimpleMLP, "simple-cnn": SimpleCNN, "ece408": ECE408}


def prepare(x_u8, size, mean, std, dev):
    x = x_u8.to(dev).float().div_(255.0).sub_(mean).div_(std)
    if size != x.shape[-1]:  # bilinear, half-pixel centres: what roofline's gather does
        x = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False)
    return x.contiguous()


def losses(values):
    """Step losses for JSON: NaN and Inf are not JSON, so they become null."""
    out = []
    for v in values:
        f = float(v)
        out.append(f if f == f and abs(f) != float("inf") else None)
    return out


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def run(model_name, dev, batch, a, data, norm):
    (xtr8, ytr), (xte8, yte) = data
    size = MODELS[model_name].size
    xtr, xte = prepare(xtr8, size, *norm, dev), prepare(xte8, size, *norm, dev)
    ytr, yte = ytr.to(dev), yte.to(dev)
    torch.manual_seed(a.seed)
    model = MODELS[model_name]().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=a.momentum, weight_decay=a.weight_decay)
    n = xtr.shape[0]
    steps = (n + batch - 1) // batch
    if a.max_steps > 0:
        steps = min(steps, a.max_steps)
    train = "train" in a.modes
    epochs = a.epochs if train else 0
    gen = torch.Generator(device=dev) if dev.type == "cuda" else torch.Generator()
    gen.manual_seed(a.seed)
    epoch_s, first = [], []
    model.train()
    for e in range(epochs):
        sync(dev)
        t0 = time.perf_counter()
        perm = torch.randperm(n, device=dev, generator=gen)
        total = torch.zeros((), device=dev)
        for s in range(steps):
            idx = perm[s * batch:(s + 1) * batch]
            loss = F.cross_entropy(model(xtr[idx]), ytr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.detach() * idx.numel()
            if e == 0 and s < 20:
                first.append(loss.detach())
        sync(dev)
        epoch_s.append(time.perf_counter() - t0)
        seen = min(n, steps * batch)
        log(f"pytorch {model_name} {dev.type} batch {batch}: epoch {e + 1}/{epochs} {epoch_s[-1]:.3f} s, "
            f"train loss {total.item() / seen:.4f}")
        if not torch.isfinite(total):
            if a.keep_going:  # recorded as diverged; the next configuration still runs
                log(f"pytorch {model_name} {dev.type} batch {batch}: the loss is not finite in epoch {e + 1}")
                return {"model": model_name, "device": "gpu" if dev.type == "cuda" else "cpu", "batch": batch,
                        "trained": train, "epochs": epochs, "steps": 0, "diverged": f"epoch {e + 1}",
                        "first_losses": losses(first)}
            raise SystemExit(f"pytorch_bench: the loss is not finite in epoch {e + 1}")
    model.eval()
    loss_sum, correct = 0.0, 0
    predicted = torch.zeros(10, dtype=torch.int64)  # test images predicted as each class (0: a dead output)
    with torch.no_grad():
        for i in range(0, xte.shape[0], 500):
            out = model(xte[i:i + 500])
            loss_sum += F.cross_entropy(out, yte[i:i + 500], reduction="sum").item()
            correct += (out.argmax(1) == yte[i:i + 500]).sum().item()
            predicted += torch.bincount(out.argmax(1), minlength=10).cpu()
        xb = xte[:batch]
        for _ in range(10):
            F.softmax(model(xb), dim=1)
        sync(dev)
        samples = []
        for _ in range(a.infer_reps):
            t0 = time.perf_counter()
            F.softmax(model(xb), dim=1)
            sync(dev)
            samples.append(time.perf_counter() - t0)
    q = statistics.quantiles(samples, n=4) if len(samples) >= 2 else [samples[0]] * 3
    return {
        "model": model_name, "device": "gpu" if dev.type == "cuda" else "cpu", "batch": batch,
        "trained": train, "epochs": epochs, "steps": steps * epochs, "train_seconds": sum(epoch_s),
        "epoch_seconds": epoch_s, "test_loss": loss_sum / xte.shape[0], "test_accuracy": correct / xte.shape[0],
        "infer_median_s": statistics.median(samples), "infer_iqr_s": q[2] - q[0],
        "first_losses": losses(first),
        "test_predictions": predicted.tolist() if train else [],
        "params": {"threads": torch.get_num_threads(), "tf32": False, "lr": a.lr, "momentum": a.momentum,
                   "weight_decay": a.weight_decay, "seed": a.seed, "max_steps": a.max_steps},
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="simple-mlp,simple-cnn")
    p.add_argument("--devices", default="cpu,gpu")
    p.add_argument("--modes", default="train,infer")
    p.add_argument("--batches", default="1,64,128")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--max-steps", type=int, default=0)
    p.add_argument("--data", default=os.environ.get("ROOFLINE_DATA", "/usr/share/datasets/fashion-mnist"))
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--infer-reps", type=int, default=200)
    p.add_argument("--keep-going", action="store_true",
                   help="record a configuration whose loss becomes NaN/Inf as diverged and run the others")
    a = p.parse_args()
    a.modes = a.modes.split(",")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    data = load(a.data)
    x = data[0][0].double().div(255.0)
    norm = (x.mean().item(), x.std(unbiased=False).item())  # from the training set, as roofline
    results = []
    devices = []
    for d in a.devices.split(","):
        if d == "gpu":
            if not torch.cuda.is_available():
                log("pytorch_bench: no CUDA GPU visible to PyTorch: GPU runs skipped")
                continue
            devices.append(torch.device("cuda"))
        else:
            devices.append(torch.device("cpu"))
    for m in a.models.split(","):
        if m not in MODELS:
            raise SystemExit(f"pytorch_bench: unknown model {m}")
        for b in [int(v) for v in a.batches.split(",")]:
            for dev in devices:
                results.append(run(m, dev, b, a, data, norm))
    json.dump({"peer": "pytorch", "torch": torch.__version__,
               "device_name": torch.cuda.get_device_name() if torch.cuda.is_available() else "",
               "threads": torch.get_num_threads(), "normalization": norm, "results": results}, sys.stdout,
              allow_nan=False)
    print()


if __name__ == "__main__":
    main()
