#!/usr/bin/env python3
"""Hugging Face's BertForQuestionAnswering beside roofline's bert-base.

  golden --out DIR [--size tiny|base] [--seed S] [--device cuda|cpu]
      A BertForQuestionAnswering built from a BertConfig (no download) with
      torch.manual_seed(S), saved with save_pretrained (config.json and
      model.safetensors, fp32) and golden.safetensors beside it: a padded batch of
      three sequences (ids, type_ids, lengths: int32) and the start and end
      logits (batch, longest) computed in float64 (the reference roofline's fp32
      is held to), in fp32 (TF32 off) and under bf16 autocast (how far PyTorch's
      own bf16 is from float64). Metadata: torch and transformers versions.
      Beside it train.safetensors: the fine-tuning step's golden values with
      dropout off (the model in eval mode), answer spans start_positions and
      end_positions (int32, batch), the span loss and every parameter's gradient
      in float64 ("grad.NAME"; base: its L2 norm "gnorm.NAME" and first 256
      values "ghead.NAME"), the losses of 3 AdamW steps (lr 1e-3, weight decay
      0.01 on every parameter) in float64 and fp32 ("losses_fp64",
      "losses_fp32"), and the relative L2 error of PyTorch's own bf16-autocast
      gradient against float64 over each tensor's first 256 values
      ("bf16_grad_rel_err", CUDA only).
      tiny: vocab 120, hidden 64, 2 layers, 4 heads, intermediate 128, 64
      positions (the CPU suite's fixture); base: bert-base-cased's sizes.

  bench [--batches 1,8,16,32] [--seqs 128,384] [--precisions fp32,tf32,bf16]
        [--modes infer,train] [--lengths equal|varied] [--compile] [--steps 20] [--warmup 5]
        [--device cuda|cpu]
      (records as peers/pytorch_nets.py prints them, model "bert-base sSEQ")
      Inference time of the same model at each cell (eager, and torch.compile
      with --compile), median and interquartile range of `steps` timed runs
      after `warmup`, peak memory; JSON on stdout, progress on stderr. fp32 means
      TF32 off for matmuls and cuDNN; tf32 on; bf16 is torch.autocast.
      train: one fine-tuning step (model.train(), hidden dropout 0.1,
      attention-probability dropout 0 as roofline's, the span loss, backward,
      torch.optim.AdamW(lr 3e-5, weight decay 0.01, fused on CUDA)); compile
      covers the model's forward and backward. --lengths varied: inference
      batches of roofline's varied lengths (the first sequence SEQ tokens, the
      others seq/4 + 37·b mod (seq − seq/4 + 1)), padded, model "bert-base
      sSEQ varied".
"""
import argparse
import json
import os
import statistics
import sys
import time

try:
    import torch
    import transformers
    from transformers import BertConfig, BertForQuestionAnswering
    from safetensors.torch import save_file
except ImportError as e:
    print(f"pytorch_bert: needs torch, transformers and safetensors: {e}", file=sys.stderr)
    sys.exit(3)


def config(size):
    if size == "tiny":
        return BertConfig(vocab_size=120, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                          intermediate_size=128, max_position_embeddings=64, type_vocab_size=2,
                          architectures=["BertForQuestionAnswering"])
    return BertConfig(vocab_size=28996, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                      intermediate_size=3072, max_position_embeddings=512, type_vocab_size=2,
                      architectures=["BertForQuestionAnswering"])


def make_batch(cfg, lens, seed, device):
    g = torch.Generator().manual_seed(seed + 1)
    longest = max(lens)
    ids = torch.zeros(len(lens), longest, dtype=torch.int64)
    types = torch.zeros_like(ids)
    mask = torch.zeros_like(ids)
    for b, n in enumerate(lens):
        ids[b, :n] = torch.randint(1, cfg.vocab_size, (n,), generator=g)
        types[b, n // 3:n] = 1  # a question, then the context
        mask[b, :n] = 1
    return ids.to(device), types.to(device), mask.to(device)


def set_precision(p):
    tf32 = p == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


def golden(args):
    cfg = config(args.size)
    cfg.attn_implementation = "eager"
    torch.manual_seed(args.seed)
    model = BertForQuestionAnswering(cfg).eval()
    os.makedirs(args.out, exist_ok=True)
    model.save_pretrained(args.out, safe_serialization=True)
    lens = [7, 19, 12] if args.size == "tiny" else [384, 200, 57]
    dev = torch.device(args.device)
    ids, types, mask = make_batch(cfg, lens, args.seed, dev)
    out = {"ids": ids.to(torch.int32).cpu().contiguous(), "type_ids": types.to(torch.int32).cpu().contiguous(),
           "lengths": torch.tensor(lens, dtype=torch.int32)}
    with torch.no_grad():
        m64 = BertForQuestionAnswering(cfg).eval()
        m64.load_state_dict(model.state_dict())
        m64 = m64.double().to(dev)
        r = m64(input_ids=ids, token_type_ids=types, attention_mask=mask)
        out["start_fp64"] = r.start_logits.float().cpu().contiguous()
        out["end_fp64"] = r.end_logits.float().cpu().contiguous()
        m32 = model.to(dev)
        set_precision("fp32")
        r = m32(input_ids=ids, token_type_ids=types, attention_mask=mask)
        out["start_fp32"] = r.start_logits.float().cpu().contiguous()
        out["end_fp32"] = r.end_logits.float().cpu().contiguous()
        if dev.type == "cuda":
            with torch.autocast("cuda", dtype=torch.bfloat16):
                r = m32(input_ids=ids, token_type_ids=types, attention_mask=mask)
            out["start_bf16"] = r.start_logits.float().cpu().contiguous()
            out["end_bf16"] = r.end_logits.float().cpu().contiguous()
    meta = {"torch": torch.__version__, "transformers": transformers.__version__, "size": args.size,
            "seed": str(args.seed)}
    save_file(out, os.path.join(args.out, "golden.safetensors"), metadata=meta)
    train_golden(args, cfg, model.float().cpu(), ids, types, mask, lens, dev)
    print(json.dumps({"out": args.out, **meta}))


def varied_lengths(batch, seq):
    """roofline's bert_varied_lengths: the first sequence seq tokens, the others spread over seq/4..seq."""
    lo = max(1, seq // 4)
    return [seq if b == 0 else lo + (b * 37) % (seq - lo + 1) for b in range(batch)]


def targets(lens, device):
    start = [min(n - 1, n // 3 + 1 + b % 7) for b, n in enumerate(lens)]
    end = [min(n - 1, s + 3) for s, n in zip(start, lens)]
    return torch.tensor(start, device=device), torch.tensor(end, device=device)


def train_golden(args, cfg, model, ids, types, mask, lens, dev):
    """Gradients of one step and losses of three AdamW steps, dropout off (eval mode)."""
    start, end = targets(lens, dev)
    out = {"start_positions": start.to(torch.int32).cpu(), "end_positions": end.to(torch.int32).cpu()}
    kw = dict(input_ids=ids, token_type_ids=types, attention_mask=mask, start_positions=start, end_positions=end)

    def copy(dtype):
        m = BertForQuestionAnswering(cfg).eval()
        m.load_state_dict(model.state_dict())
        return m.to(dtype).to(dev)
    m64 = copy(torch.float64)
    loss = m64(**kw).loss
    loss.backward()
    out["loss_fp64"] = torch.tensor([loss.item()], dtype=torch.float64).float()
    grads64 = {n: p.grad.detach().clone() for n, p in m64.named_parameters()}
    for n, g in grads64.items():
        if args.size == "tiny":
            out["grad." + n] = g.float().cpu().contiguous()
        else:
            out["gnorm." + n] = torch.tensor([g.norm().item()], dtype=torch.float64).float()
            out["ghead." + n] = g.flatten()[:256].float().cpu().contiguous()
    if dev.type == "cuda":
        mb = copy(torch.float32)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            lb = mb(**kw).loss
        lb.backward()
        # Over each gradient's first 256 values: what the base golden keeps of ours to compare.
        num = sum(((p.grad.double().flatten()[:256] - grads64[n].flatten()[:256]) ** 2).sum().item()
                  for n, p in mb.named_parameters())
        den = sum((g.flatten()[:256] ** 2).sum().item() for g in grads64.values())
        out["bf16_grad_rel_err"] = torch.tensor([(num / den) ** 0.5])
    for name, dtype in (("losses_fp64", torch.float64), ("losses_fp32", torch.float32)):
        set_precision("fp32")
        m = copy(dtype)
        opt = torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=0.01)
        losses = []
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss = m(**kw).loss
            loss.backward()
            opt.step()
            losses.append(loss.item())
        out[name] = torch.tensor(losses, dtype=torch.float64).float()
    save_file(out, os.path.join(args.out, "train.safetensors"),
              metadata={"torch": torch.__version__, "transformers": transformers.__version__})


def time_cell(fn, steps, warmup, cuda):
    for _ in range(warmup):
        fn()
    if cuda:
        torch.cuda.synchronize()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        fn()
        if cuda:
            torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    q = statistics.quantiles(times, n=4) if len(times) >= 4 else [times[0], times[len(times) // 2], times[-1]]
    return statistics.median(times), q[2] - q[0]


def bench(args):
    cfg = config("base")
    dev = torch.device(args.device)
    cuda = dev.type == "cuda"
    rows = []
    variants = ["eager"] + (["compile"] if args.compile else [])
    for mode, variant in [(m, v) for m in args.modes.split(",") for v in variants]:
        train = mode == "train"
        if train:
            cfg.attention_probs_dropout_prob = 0.0  # roofline's fused attention has no dropout
        torch.manual_seed(0)
        model = BertForQuestionAnswering(cfg).to(dev)
        model.train() if train else model.eval()
        m = torch.compile(model) if variant == "compile" else model
        opt = torch.optim.AdamW(model.parameters(), lr=3e-5, weight_decay=0.01, fused=cuda) if train else None
        for p in args.precisions.split(","):
            if not cuda and p != "fp32":
                continue
            set_precision(p)
            for s in [int(x) for x in args.seqs.split(",")]:
                for b in [int(x) for x in args.batches.split(",")]:
                    varied = args.lengths == "varied" and not train
                    lens = varied_lengths(b, s) if varied else [s] * b
                    ids, types, mask = make_batch(cfg, lens, 0, dev)
                    start, end = targets(lens, dev)

                    def forward():
                        kw = dict(input_ids=ids, token_type_ids=types, attention_mask=mask)
                        if train:
                            kw.update(start_positions=start, end_positions=end)
                        if p == "bf16":
                            with torch.autocast("cuda", dtype=torch.bfloat16):
                                return m(**kw)
                        return m(**kw)

                    def run():
                        if not train:
                            with torch.no_grad():
                                forward()
                            return
                        opt.zero_grad(set_to_none=True)
                        forward().loss.backward()
                        opt.step()
                    if cuda:
                        torch.cuda.reset_peak_memory_stats()
                    ms, iqr = time_cell(run, args.steps, args.warmup + (3 if variant == "compile" else 0), cuda)
                    mem = torch.cuda.max_memory_allocated() / 2**20 if cuda else 0
                    print(f"pytorch_bert: {variant} {mode} {p} b{b} s{s}: {ms:.3f} ms", file=sys.stderr)
                    rows.append({"source": "pytorch" if variant == "eager" else "pytorch-compile",
                                 "model": f"bert-base s{s}" + (" varied" if varied else ""),
                                 "device": "gpu" if cuda else "cpu", "precision": p,
                                 "batch": b, "mode": mode, "steps": args.steps, "median_s": ms / 1e3,
                                 "iqr_s": iqr / 1e3, "peak_bytes": mem * 2**20 if cuda else None,
                                 "torch": torch.__version__, "threads": torch.get_num_threads()})
    print(json.dumps({"torch": torch.__version__, "transformers": transformers.__version__,
                      "threads": torch.get_num_threads(), "records": rows}))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("golden")
    g.add_argument("--out", required=True)
    g.add_argument("--size", default="tiny", choices=["tiny", "base"])
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--device", default="cpu")
    b = sub.add_parser("bench")
    b.add_argument("--batches", default="1,8,16,32")
    b.add_argument("--seqs", default="128,384")
    b.add_argument("--precisions", default="fp32,tf32,bf16")
    b.add_argument("--modes", default="infer")
    b.add_argument("--lengths", default="equal", choices=["equal", "varied"])
    b.add_argument("--compile", action="store_true")
    b.add_argument("--steps", type=int, default=20)
    b.add_argument("--warmup", type=int, default=5)
    b.add_argument("--device", default="cuda")
    args = ap.parse_args()
    golden(args) if args.cmd == "golden" else bench(args)


if __name__ == "__main__":
    main()
