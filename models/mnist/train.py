#!/usr/bin/python3
"""Train one MNIST model on the 9000-image training split and export it to ONNX.

usage: train.py {mlp,cnn,vit} [--val] [--threads N] [--epochs N]

default   train on all 9000 training images, report top-1 on the held-out test set
          (test_x.npy / test_y.npy), write <model>.onnx (opset 13; for vit also
          vit_opset17.onnx), check it with onnx.checker, and keep the weights and the
          torch test logits in data/ (git-ignored) for comparing with other runtimes.
--val     recipe development: train on 8000, report top-1 on the other 1000 training
          images; the test set is not read and nothing is exported.

Everything is seeded (model init, shuffling, augmentation) and deterministic
algorithms are enforced, so a rerun with the same --threads on the same machine and
torch build gives bit-identical weights; the run prints a SHA-256 of the weights.
"""
import argparse
import hashlib
import math
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import mnist_data as md

SEED = 1234


# ----------------------------------------------------------------------------- models

class MLP(nn.Module):
    """784-256-128-10, ReLU. Flatten + Linear export as Flatten + Gemm."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Flatten(), nn.Linear(784, 256), nn.ReLU(),
            nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, x):
        return self.net(x)


class CNN(nn.Module):
    """Conv3x3(1->16)+BN+ReLU, MaxPool2, Conv3x3(16->32)+BN+ReLU, MaxPool2, FC128, FC10."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(32 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


class Attention(nn.Module):
    """Multi-head self-attention written out so it exports as plain
    MatMul / Mul / Softmax / Reshape / Transpose. Shapes use constants (batch = -1)
    so the graph has no Shape/Gather chains."""

    def __init__(self, dim, heads, tokens):
        super().__init__()
        self.h, self.d, self.n = heads, dim // heads, tokens
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)
        self.scale = 1.0 / math.sqrt(self.d)

    def forward(self, x):                                   # x: (B, N, D)
        h, d, n = self.h, self.d, self.n
        q = self.q(x).reshape(-1, n, h, d).transpose(1, 2)  # (B, H, N, d)
        k = self.k(x).reshape(-1, n, h, d).permute(0, 2, 3, 1)  # (B, H, d, N)
        v = self.v(x).reshape(-1, n, h, d).transpose(1, 2)  # (B, H, N, d)
        a = torch.softmax(torch.matmul(q, k) * self.scale, dim=-1)
        o = torch.matmul(a, v).transpose(1, 2).reshape(-1, n, h * d)
        return self.proj(o)


class Block(nn.Module):
    def __init__(self, dim, heads, tokens, hidden):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads, tokens)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class ViT(nn.Module):
    """7x7 patches (16 tokens), dim 64, 2 pre-LN blocks with 4 heads and a GELU MLP,
    learned position embedding, final LayerNorm, mean-pool over tokens, linear head."""

    def __init__(self, dim=64, depth=2, heads=4, hidden=128):
        super().__init__()
        self.dim, self.tokens = dim, 16
        self.patch = nn.Conv2d(1, dim, 7, stride=7)
        self.pos = nn.Parameter(torch.zeros(1, self.tokens, dim))
        nn.init.trunc_normal_(self.pos, std=0.02)
        self.blocks = nn.Sequential(*[Block(dim, heads, self.tokens, hidden)
                                      for _ in range(depth)])
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, 10)

    def forward(self, x):
        x = self.patch(x).reshape(-1, self.dim, self.tokens).transpose(1, 2) + self.pos
        x = self.ln(self.blocks(x))
        return self.head(x.mean(dim=1))


# Per-model recipe. AdamW, linear warm-up then cosine decay to 0, batch 128.
RECIPES = {
    "mlp": dict(net=MLP, epochs=40, lr=1e-3, wd=1e-4, warmup=1, smooth=0.0),
    "cnn": dict(net=CNN, epochs=30, lr=2e-3, wd=1e-4, warmup=1, smooth=0.0),
    "vit": dict(net=ViT, epochs=80, lr=1e-3, wd=5e-2, warmup=5, smooth=0.0),
}
BATCH = 128

# Augmentation: random affine per image (rotation, scale, shift), bilinear, on [0,1]
# pixels before normalization (so the padding is true background).
ROT_DEG, SCALE, SHIFT_PX = 10.0, 0.1, 2.0


def augment(u01, gen):
    b = u01.shape[0]
    r = (torch.rand(b, generator=gen) * 2 - 1) * math.radians(ROT_DEG)
    s = 1 + (torch.rand(b, generator=gen) * 2 - 1) * SCALE
    t = (torch.rand(b, 2, generator=gen) * 2 - 1) * (SHIFT_PX * 2 / 28)
    theta = torch.zeros(b, 2, 3)
    theta[:, 0, 0] = torch.cos(r) / s
    theta[:, 0, 1] = -torch.sin(r) / s
    theta[:, 1, 0] = torch.sin(r) / s
    theta[:, 1, 1] = torch.cos(r) / s
    theta[:, :, 2] = t
    grid = F.affine_grid(theta, list(u01.shape), align_corners=False)
    return F.grid_sample(u01, grid, mode="bilinear", padding_mode="zeros",
                         align_corners=False)


def normalize(u01):
    return (u01 - md.MEAN) / md.STD


# ----------------------------------------------------------------------------- train

def weights_sha256(model):
    h = hashlib.sha256()
    for k, v in model.state_dict().items():
        h.update(k.encode())
        h.update(v.detach().contiguous().numpy().tobytes())
    return h.hexdigest()


@torch.no_grad()
def logits_of(model, x):
    model.eval()
    return torch.cat([model(x[i:i + 500]) for i in range(0, len(x), 500)])


def train(name, images_u8, labels, epochs, eval_set=None):
    rc = RECIPES[name]
    torch.manual_seed(SEED)
    model = rc["net"]()
    gen = torch.Generator().manual_seed(SEED + 1)

    x01 = torch.from_numpy(images_u8).float().div_(255.0).unsqueeze(1)
    y = torch.from_numpy(labels)
    n = len(x01)
    steps_per_epoch = math.ceil(n / BATCH)
    total, warm = epochs * steps_per_epoch, rc["warmup"] * steps_per_epoch

    decay, no_decay = [], []
    for pn, p in model.named_parameters():
        (decay if p.dim() >= 2 and not pn.endswith("pos") else no_decay).append(p)
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": rc["wd"]},
                             {"params": no_decay, "weight_decay": 0.0}], lr=rc["lr"])
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warm if s < warm
        else 0.5 * (1 + math.cos(math.pi * (s - warm) / max(1, total - warm))))

    t0 = time.time()
    for ep in range(epochs):
        model.train()
        perm = torch.randperm(n, generator=gen)
        tot_loss, correct = 0.0, 0
        for i in range(0, n, BATCH):
            idx = perm[i:i + BATCH]
            xb = normalize(augment(x01[idx], gen))
            out = model(xb)
            loss = F.cross_entropy(out, y[idx], label_smoothing=rc["smooth"])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            tot_loss += loss.item() * len(idx)
            correct += (out.argmax(1) == y[idx]).sum().item()
        msg = (f"{name} epoch {ep + 1:3d}/{epochs} loss {tot_loss / n:.4f} "
               f"train-acc(aug) {correct / n:.4f}  {time.time() - t0:6.1f}s")
        if eval_set is not None and ((ep + 1) % 5 == 0 or ep + 1 == epochs):
            ex, ey = eval_set
            acc = (logits_of(model, ex).argmax(1) == ey).float().mean().item()
            msg += f"  val-acc {acc:.4f}"
        print(msg, flush=True)
    model.eval()
    return model


# ----------------------------------------------------------------------------- export

def export(model, path, opset):
    import warnings

    import onnx
    dummy = torch.from_numpy(np.load(os.path.join(md.HERE, "sample.npy")))
    # PRESERVE (with the model in eval mode) exports inference-mode ops but skips the
    # exporter's eval peephole, which would fuse BatchNorm into Conv: q8 folds BN itself.
    # (Its warning about constant folding applies to models in training mode only.)
    warnings.filterwarnings("ignore", message="It is recommended that constant folding")
    torch.onnx.export(model, dummy, path, opset_version=opset,
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                      do_constant_folding=True,
                      training=torch.onnx.TrainingMode.PRESERVE)
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    ops = {}
    for node in m.graph.node:
        ops[node.op_type] = ops.get(node.op_type, 0) + 1
    print(f"wrote {os.path.relpath(path, md.HERE)}: {os.path.getsize(path)} bytes, "
          f"opset {opset}, checker OK, ops {dict(sorted(ops.items()))}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", choices=sorted(RECIPES))
    ap.add_argument("--val", action="store_true", help="train 8000 / validate 1000")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=None, help="override the recipe")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    images, labels = md.load_train()
    epochs = args.epochs or RECIPES[args.model]["epochs"]

    if args.val:
        perm = np.random.RandomState(SEED).permutation(len(images))
        tr, va = perm[1000:], perm[:1000]
        vx = torch.from_numpy(md.normalize_u8(images[va])[:, None])
        train(args.model, images[tr], labels[tr], epochs,
              eval_set=(vx, torch.from_numpy(labels[va])))
        return

    model = train(args.model, images, labels, epochs)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{args.model}: {n_params} parameters, weights sha256 {weights_sha256(model)}")

    tx, ty = md.load_test()
    logits = logits_of(model, torch.from_numpy(tx)).numpy()
    acc = float((logits.argmax(1) == ty).mean())
    print(f"{args.model}: torch FP32 top-1 on test_x.npy: {acc:.4f} "
          f"({int(round(acc * len(ty)))}/{len(ty)})")

    os.makedirs(md.DATA_DIR, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(md.DATA_DIR, f"{args.model}.pt"))
    np.save(os.path.join(md.DATA_DIR, f"{args.model}_torch_logits.npy"), logits)
    export(model, os.path.join(md.HERE, f"{args.model}.onnx"), 13)
    if args.model == "vit":
        export(model, os.path.join(md.HERE, "vit_opset17.onnx"), 17)


if __name__ == "__main__":
    main()
