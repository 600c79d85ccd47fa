#!/usr/bin/python3
"""Export q8's zoo of third-party-style FP32 models to ONNX, with sample inputs.

  /usr/bin/python3 tools/zoo/make_zoo.py OUTDIR [--only NAME,...] [--list]

Needs Debian's torch 1.13, torchvision 0.14 (apt-get install python3-torchvision),
onnx 1.12, numpy. Downloads nothing: weights are random with fixed seeds
(BatchNorm statistics are "settled" on random data so that activations keep a
sane scale through deep nets). For each model NAME it writes

  OUTDIR/NAME.onnx
  OUTDIR/NAME.inputs/<input name>.npy       one sample per model input
  OUTDIR/NAME.expected/<output name>.npy    PyTorch's outputs on that sample
                                            (names sanitized like q8run's)
  OUTDIR/manifest.json                      opsets, inputs, outputs, op counts

See tools/zoo/README.md for what each model covers.
"""

import argparse
import json
import math
import os
import re
import shutil
import sys
import warnings
import zlib

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import TensorProto, helper

EVAL = torch.onnx.TrainingMode.EVAL  # exporter folds BatchNorm into Conv
PRESERVE = torch.onnx.TrainingMode.PRESERVE  # BatchNormalization nodes stay


def sanitize(name):
    """Same file names as q8run (tools/cli_util.c q8_cli_sanitize)."""
    out = "".join(chr(b) if re.match(rb"[A-Za-z0-9._-]", bytes([b])) else "_"
                  for b in name.encode("utf-8")[:255])
    return "_" + out if out in ("", ".", "..") else out


# ------------------------------------------------------------------ weights

def randomize_bn(model, gen):
    """Non-trivial BN affine parameters (the defaults 1/0 hide folding bugs)."""
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            with torch.no_grad():
                m.weight.copy_(torch.rand(m.weight.shape, generator=gen) + 0.5)
                m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)


@torch.no_grad()
def settle_bn(model, make_input, steps=3):
    """Running mean/var from a few random batches, as after training."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    saved = [m.momentum for m in bns]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # cumulative average
    model.train()
    for _ in range(steps):
        model(*make_input(4))
    for m, mom in zip(bns, saved):
        m.momentum = mom
    model.eval()


@torch.no_grad()
def scale_head(model, head, args, target_std=3.0):
    """Scales the classifier `head` (a module with .weight, .bias) so that its
    outputs (the logits) have about target_std, like a trained net's, instead of
    the near-zero logits of a random init."""
    got = []
    h = head.register_forward_hook(lambda m, i, o: got.append(o))
    model(*args)
    h.remove()
    k = target_std / max(float(got[0].std()), 1e-12)
    head.weight.mul_(k)
    head.bias.mul_(k)


def image(shape, gen, nhwc=False):
    """A normalized "image": uniform [0,1) pixels, ImageNet mean/std."""
    x = torch.rand(shape, generator=gen)
    mean = torch.tensor([0.485, 0.456, 0.406])
    std = torch.tensor([0.229, 0.224, 0.225])
    if nhwc:
        return (x - mean) / std
    return (x - mean.view(1, 3, 1, 1)) / std.view(1, 3, 1, 1)


# ------------------------------------------------------------------ models

class UNetSmall(nn.Module):
    """U-Net-like segmentation net: Conv+BN+ReLU blocks, MaxPool, skip Concat,
    and three ways up: ConvTranspose2d, Upsample bilinear (align_corners=False),
    Upsample nearest; an auxiliary head upsampled bilinear with
    align_corners=True; per-pixel Softmax over the class axis (dim 1)."""

    def __init__(self, classes=4):
        super().__init__()

        def block(ci, co):
            return nn.Sequential(nn.Conv2d(ci, co, 3, padding=1, bias=False), nn.BatchNorm2d(co),
                                 nn.ReLU(inplace=True),
                                 nn.Conv2d(co, co, 3, padding=1, bias=False), nn.BatchNorm2d(co),
                                 nn.ReLU(inplace=True))
        self.e1, self.e2, self.e3, self.mid = block(3, 16), block(16, 32), block(32, 64), block(64, 128)
        self.pool = nn.MaxPool2d(2)
        self.up1 = nn.ConvTranspose2d(128, 64, 2, stride=2)
        self.d1 = block(128, 64)
        self.up2 = nn.Sequential(nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
                                 nn.Conv2d(64, 32, 1))
        self.d2 = block(64, 32)
        self.up3 = nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(32, 16, 1))
        self.d3 = block(32, 16)
        self.head = nn.Conv2d(16, classes, 1)
        self.aux = nn.Conv2d(128, classes, 1)
        self.aux_up = nn.Upsample(scale_factor=8, mode="bilinear", align_corners=True)

    def forward(self, x):
        s1 = self.e1(x)
        s2 = self.e2(self.pool(s1))
        s3 = self.e3(self.pool(s2))
        m = self.mid(self.pool(s3))
        y = self.d1(torch.cat([self.up1(m), s3], 1))
        y = self.d2(torch.cat([self.up2(y), s2], 1))
        y = self.d3(torch.cat([self.up3(y), s1], 1))
        logits = self.head(y) + 0.5 * self.aux_up(self.aux(m))
        return logits, torch.softmax(logits, dim=1)


class Attention(nn.Module):
    """Hand-written multi-head self-attention (pre-LayerNorm, residual).
    Reshapes take their sizes from the input so that the exported graph has
    Shape/Gather/Concat chains, as real exports with dynamic axes do."""

    def __init__(self, d, heads):
        super().__init__()
        self.h, self.dk = heads, d // heads
        self.norm = nn.LayerNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x):
        b, t, d = x.shape
        y = self.norm(x)

        def split(z):
            return z.reshape(b, t, self.h, self.dk).transpose(1, 2)
        q, k, v = split(self.q(y)), split(self.k(y)), split(self.v(y))
        att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dk), dim=-1)
        z = (att @ v).transpose(1, 2).reshape(b, t, d)
        return x + self.o(z)


class TokenTransformer(nn.Module):
    """int64 token ids -> Embedding (Gather) + learned positions (Slice on a
    dynamic length) -> hand-written attention -> nn.TransformerEncoderLayer
    (GELU) -> LayerNorm -> mean over tokens -> Linear. Two outputs."""

    def __init__(self, vocab=1000, d=64, heads=4, max_len=128, classes=10):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(max_len, d) * 0.02)
        self.att = Attention(d, heads)
        self.enc = nn.TransformerEncoderLayer(d, heads, dim_feedforward=2 * d, dropout=0.0,
                                              activation="gelu", batch_first=True)
        self.norm = nn.LayerNorm(d)
        self.cls = nn.Linear(d, classes)

    def forward(self, tokens):
        x = self.emb(tokens) + self.pos[: tokens.shape[1]]
        x = self.norm(self.enc(self.att(x)))
        return self.cls(x.mean(dim=1)), x


class PreNormEncoder(nn.Module):
    """Two pre-norm nn.TransformerEncoderLayer (GELU) and a final LayerNorm;
    at opset 17 LayerNorm exports as one LayerNormalization node."""

    def __init__(self, d=64, heads=4):
        super().__init__()
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d, heads, dim_feedforward=4 * d, dropout=0.0,
                                       activation="gelu", batch_first=True, norm_first=True)
            for _ in range(2))
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class Dense(nn.Module):
    """Keras Dense as tf2onnx writes it: MatMul with a (in, out) weight + Add."""

    def __init__(self, cin, cout):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(cin, cout) / math.sqrt(cin))
        self.bias = nn.Parameter(torch.randn(cout) * 0.1)

    def forward(self, x):
        return x @ self.weight + self.bias


class KerasStyleNet(nn.Module):
    """What tf2onnx makes of a small Keras CNN: NHWC input transposed to NCHW
    inside the graph, 'same' padding with stride 2 as an explicit asymmetric
    Pad, Conv/BN/LeakyReLU, a depthwise-separable block, back to NHWC,
    GlobalAveragePooling2D as ReduceMean over H,W, Dense as MatMul + Add,
    Softmax."""

    def __init__(self, classes=10):
        super().__init__()
        self.c1 = nn.Conv2d(3, 32, 3, stride=2, bias=False)
        self.b1 = nn.BatchNorm2d(32)
        self.dw = nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False)
        self.b2 = nn.BatchNorm2d(32)
        self.pw = nn.Conv2d(32, 64, 1, bias=False)
        self.b3 = nn.BatchNorm2d(64)
        self.c2 = nn.Conv2d(64, 128, 3, stride=2, bias=False)
        self.b4 = nn.BatchNorm2d(128)
        self.dense = Dense(128, classes)

    def forward(self, x):
        x = x.permute(0, 3, 1, 2)
        act = lambda t: F.leaky_relu(t, 0.1)  # noqa: E731
        x = act(self.b1(self.c1(F.pad(x, (0, 1, 0, 1)))))
        x = act(self.b3(self.pw(act(self.b2(self.dw(x))))))
        x = act(self.b4(self.c2(F.pad(x, (0, 1, 0, 1)))))
        x = x.permute(0, 2, 3, 1).mean(dim=(1, 2))
        return torch.softmax(self.dense(x), dim=-1)


class StftVad(nn.Module):
    """A Silero-VAD-style audio front end: the STFT as one Conv1d with a long
    kernel and a large stride (a Hann-windowed DFT basis, 129 real + 129
    imaginary rows, 256 taps, hop 128), the magnitude, then four small
    Conv1d + ReLU layers and a 1x1 conv + sigmoid per frame."""

    def __init__(self, n_fft=256, hop=128):
        super().__init__()
        k = torch.arange(n_fft // 2 + 1, dtype=torch.float64)[:, None]
        t = torch.arange(n_fft, dtype=torch.float64)[None, :]
        win = torch.hann_window(n_fft, periodic=True, dtype=torch.float64)
        ang = 2 * math.pi * k * t / n_fft
        basis = torch.cat([torch.cos(ang) * win, -torch.sin(ang) * win])[:, None, :]
        self.register_buffer("basis", basis.float())
        self.hop, self.bins = hop, n_fft // 2 + 1
        chans = [(self.bins, 128, 1), (128, 64, 2), (64, 64, 2), (64, 128, 1)]
        self.enc = nn.ModuleList(nn.Conv1d(ci, co, 3, stride=s, padding=1)
                                 for ci, co, s in chans)
        self.head = nn.Conv1d(128, 1, 1)

    def forward(self, x):
        s = F.conv1d(x, self.basis, stride=self.hop)
        re, im = s[:, :self.bins], s[:, self.bins:]
        x = torch.sqrt(re * re + im * im)
        for conv in self.enc:
            x = F.relu(conv(x))
        return torch.sigmoid(self.head(x))


def tv(name):
    import torchvision  # noqa: F401  (Debian: python3-torchvision)
    from torchvision import models
    return getattr(models, name)(weights=None)


# ------------------------------------------------------------------ the zoo

# name -> spec. inputs: (name, shape, "image"|"image_nhwc"|"tokens:VOCAB"|"normal")
ZOO = {
    "mobilenet_v3_small_op17": dict(
        build=lambda: tv("mobilenet_v3_small"), opset=17, training=PRESERVE,
        head=lambda m: m.classifier[3],
        inputs=[("image", (1, 3, 224, 224), "image")], outputs=["logits"],
        dynamic={"image": {0: "N"}, "logits": {0: "N"}},
        about="torchvision MobileNetV3-Small, random weights: BatchNormalization kept, "
              "HardSwish, HardSigmoid in squeeze-excite blocks, depthwise convs, "
              "GlobalAveragePool, Gemm; dynamic batch 'N'"),
    "mobilenet_v3_small_op13": dict(
        build=lambda: tv("mobilenet_v3_small"), opset=13, training=EVAL,
        head=lambda m: m.classifier[3],
        inputs=[("image", (1, 3, 224, 224), "image")], outputs=["logits"],
        about="the same net at opset 13 with BN folded by the exporter: HardSwish "
              "does not exist before opset 14, so it is HardSigmoid + Mul"),
    "resnet18_op9": dict(
        build=lambda: tv("resnet18"), opset=9, training=EVAL, keep_init=True,
        head=lambda m: m.fc,
        inputs=[("data", (1, 3, 224, 224), "image")], outputs=["output:0"],
        about="torchvision ResNet-18 at opset 9, old-exporter style: BN folded into "
              "Conv, initializers also listed as graph inputs, output named 'output:0'"),
    "unet_small_op11": dict(
        build=UNetSmall, opset=11, training=PRESERVE,
        inputs=[("image", (1, 3, 128, 128), "image")], outputs=["mask_logits", "mask_prob"],
        about="U-Net-like segmentation: ConvTranspose, Resize (bilinear half-pixel, "
              "bilinear align_corners, nearest) from nn.Upsample, Concat skips, BN kept, "
              "Softmax over axis 1 of a 4-D tensor at opset 11 (exported with Transposes)"),
    "transformer_tokens_op13": dict(
        build=TokenTransformer, opset=13, training=EVAL, head=lambda m: m.cls,
        inputs=[("tokens", (1, 32), "tokens:1000")], outputs=["logits", "hidden"],
        dynamic={"tokens": {0: "batch", 1: "seq"}, "logits": {0: "batch"},
                 "hidden": {0: "batch", 1: "seq"}},
        about="transformer encoder on int64 token ids: Gather embedding, Slice of "
              "positions by a dynamic length, hand-written attention (MatMul, Softmax, "
              "Shape-driven Reshape/Transpose), nn.TransformerEncoderLayer, LayerNorm "
              "decomposed (ReduceMean, Sub, Pow, Sqrt, Div), GELU via Erf; dynamic batch "
              "and sequence"),
    "transformer_ln17": dict(
        build=PreNormEncoder, opset=17, training=EVAL,
        inputs=[("x", (1, 16, 64), "normal")], outputs=["y"],
        about="two pre-norm nn.TransformerEncoderLayer + final LayerNorm at opset 17: "
              "LayerNormalization nodes, GELU via Erf, float input (batch, seq, 64)"),
    "keras_nhwc_op11": dict(
        build=KerasStyleNet, opset=11, training=PRESERVE, head=lambda m: m.dense,
        inputs=[("input_1", (1, 96, 96, 3), "image_nhwc")], outputs=["dense/Softmax:0"],
        about="Keras/tf2onnx-style CNN: NHWC input, Transpose to NCHW in the graph, "
              "asymmetric Pad (opset 11: pads as an input), Conv, BN kept, LeakyRelu, "
              "depthwise + pointwise conv, Transpose back, ReduceMean over H,W, "
              "MatMul + Add, Softmax"),
    "stft_vad_op13": dict(
        build=StftVad, opset=13, training=EVAL,
        inputs=[("audio", (1, 1, 16000), "normal")], outputs=["speech_prob"],
        about="audio front end as in Silero VAD: STFT as a Conv1d(1, 258, 256, stride "
              "128) on one second at 16 kHz, Slice, magnitude (Mul, Add, Sqrt), four "
              "Conv1d + Relu, 1x1 Conv + Sigmoid per frame"),
    "tiny_relu_op13": dict(
        build=None, opset=13,
        inputs=[("x", (2, 3, 13), "normal")], outputs=["y:0", "z/out"],
        about="two chained Relu nodes written with onnx.helper, both outputs returned; "
              "names with ':' and '/' check the output file names (y_0.npy, z_out.npy)"),
}

# Third-party files found on this machine (see README.md): copied when present.
THIRD_PARTY = {
    "thirdparty_single_relu_op6": (
        "/usr/lib/python3/dist-packages/onnx/examples/resources/single_relu.onnx",
        [("x", (1, 2), "normal")],
        "single Relu from the onnx package's examples (opset 6, IR version 3)"),
    "thirdparty_two_transposes_op6": (
        "/usr/lib/python3/dist-packages/onnx/examples/resources/two_transposes.onnx",
        [("X", (2, 3, 4), "normal")],
        "two Transposes from the onnx package's examples (opset 6, IR version 3)"),
}


def make_input(kind, shape, gen):
    if kind == "image":
        return image(shape, gen)
    if kind == "image_nhwc":
        return image(shape, gen, nhwc=True)
    if kind.startswith("tokens:"):
        return torch.randint(0, int(kind.split(":")[1]), shape, generator=gen, dtype=torch.int64)
    return torch.randn(shape, generator=gen)


def write_sample(out, name, inputs, outputs):
    idir, edir = os.path.join(out, name + ".inputs"), os.path.join(out, name + ".expected")
    for d in (idir, edir):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    for iname, t in inputs:
        np.save(os.path.join(idir, sanitize(iname) + ".npy"), np.ascontiguousarray(t))
    for oname, t in outputs:
        np.save(os.path.join(edir, sanitize(oname) + ".npy"), np.ascontiguousarray(t))


def tiny_relu(path, spec):
    n1 = helper.make_node("Relu", ["x"], ["y:0"], name="relu_1")
    n2 = helper.make_node("Relu", ["y:0"], ["z/out"], name="relu_2")
    vi = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3, 13])  # noqa: E731
    g = helper.make_graph([n1, n2], "tiny_relu", [vi("x")], [vi("y:0"), vi("z/out")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", spec["opset"])],
                          producer_name="q8 make_zoo.py")
    onnx.save(m, path)


def export(name, spec, out, seed):
    path = os.path.join(out, name + ".onnx")
    gen = torch.Generator().manual_seed(seed)
    sample = [(n, make_input(k, s, gen)) for n, s, k in spec["inputs"]]
    if spec["build"] is None:
        tiny_relu(path, spec)
        x = sample[0][1]
        outs = [x.clamp(min=0), x.clamp(min=0)]
    else:
        torch.manual_seed(seed)
        model = spec["build"]().eval()
        randomize_bn(model, gen)
        kinds = [(s, k) for _, s, k in spec["inputs"]]
        settle_bn(model, lambda b: [make_input(k, (b,) + tuple(s[1:]), gen) for s, k in kinds])
        args = tuple(t for _, t in sample)
        if "head" in spec:
            scale_head(model, spec["head"](model), args)
        with torch.no_grad():
            outs = model(*args)
        outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        torch.onnx.export(model, args, path, opset_version=spec["opset"],
                          training=spec.get("training", EVAL),
                          input_names=[n for n, _ in sample], output_names=spec["outputs"],
                          dynamic_axes=spec.get("dynamic"),
                          keep_initializers_as_inputs=spec.get("keep_init", False),
                          do_constant_folding=True)
    write_sample(out, name, [(n, t.numpy()) for n, t in sample],
                 list(zip(spec["outputs"], [o.detach().numpy() for o in outs])))
    return path


def describe(path):
    m = onnx.load(path)
    notes = []
    try:
        onnx.checker.check_model(m)
    except Exception as e:  # noqa: BLE001  (third-party files may be sloppy)
        notes.append(f"onnx.checker: {e}")
    try:
        onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
    except Exception as e:  # noqa: BLE001
        notes.append(f"strict shape inference: {str(e).splitlines()[0]}")
    ops = {}
    for n in m.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    inits = {i.name for i in m.graph.initializer}

    def shape(v):
        return [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
    params = sum(int(np.prod(i.dims)) for i in m.graph.initializer)
    return {
        "file": os.path.basename(path),
        "bytes": os.path.getsize(path),
        "opset": next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx")),
        "ir_version": m.ir_version,
        "inputs": [{"name": i.name, "shape": shape(i),
                    "dtype": TensorProto.DataType.Name(i.type.tensor_type.elem_type)}
                   for i in m.graph.input if i.name not in inits],
        "outputs": [{"name": o.name, "shape": shape(o)} for o in m.graph.output],
        "initializers_as_inputs": sum(i.name in inits for i in m.graph.input),
        "params": params,
        "nodes": len(m.graph.node),
        "ops": dict(sorted(ops.items())),
        "notes": notes,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--only", help="comma-separated model names")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    names = list(ZOO) + list(THIRD_PARTY)
    if a.list:
        for n in names:
            about = ZOO[n]["about"] if n in ZOO else THIRD_PARTY[n][2]
            print(f"{n}: {about}")
        return 0
    if not a.outdir:
        ap.error("OUTDIR is required")
    if a.only:
        want = a.only.split(",")
        bad = [n for n in want if n not in names]
        if bad:
            ap.error(f"unknown model(s) {', '.join(bad)}; --list shows them")
        names = [n for n in names if n in want]
    os.makedirs(a.outdir, exist_ok=True)
    mpath = os.path.join(a.outdir, "manifest.json")
    manifest = {}
    if os.path.exists(mpath):
        with open(mpath) as f:
            manifest = json.load(f)
    warnings.filterwarnings("ignore")  # the exporter's TracerWarnings etc.
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    for name in names:
        seed = a.seed + zlib.crc32(name.encode()) % 100000  # stable under --only
        if name in ZOO:
            spec = ZOO[name]
            path = export(name, spec, a.outdir, seed)
            about = spec["about"]
        else:
            src, inputs, about = THIRD_PARTY[name]
            if not os.path.exists(src):
                print(f"skip {name}: {src} not found")
                continue
            path = os.path.join(a.outdir, name + ".onnx")
            shutil.copyfile(src, path)
            gen = torch.Generator().manual_seed(seed)
            write_sample(a.outdir, name,
                         [(n, make_input(k, s, gen).numpy()) for n, s, k in inputs], [])
            about += f" (copied from {src}; no expected outputs)"
        d = describe(path)
        d["about"] = about
        manifest[name] = d
        print(f"{name}: opset {d['opset']}, {d['nodes']} nodes, {d['params']} params, "
              f"{d['bytes']} bytes, ops {' '.join(d['ops'])}", flush=True)
        for note in d["notes"]:
            print(f"  note: {note}")
    with open(mpath, "w") as f:
        json.dump(manifest, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
