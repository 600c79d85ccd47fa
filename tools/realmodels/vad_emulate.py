#!/usr/bin/env python3
"""Which parts of Silero VAD (kit model silero_vad) can be INT8 at all, chunk
by chunk: INT8 emulated in the FP32 model and streamed as vad_check.py
streams (state and context carried), against FP32 on the same streams.

    /usr/bin/python3 tools/realmodels/vad_emulate.py --build build [--seeds 1,2] VARIANT...

Variants (each an ONNX model run by q8's FP32 executor):
  w:NAMES     the weights of the Convs whose name contains one of NAMES
              (comma-separated; 'all' for every Conv) rounded to INT8 as
              quantize does (symmetric, per output channel, 127 levels; the
              16-bit scale form left out)
  wa:NAMES    the same, and each such Conv's input rounded with a per-run
              scale (largest |x| of the run / 127: dynamic quantization)
  lstm-w      the LSTM's W and R rounded to INT8 per row
  lstm-wa     the same, and its X and initial h rounded per run
Prints, per stream, the largest and mean |emulated - FP32| speech probability.
"""
import argparse
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vad_check  # noqa: E402


def int8_rows(w):
    """Symmetric INT8 per row (axis 0), back to float."""
    s = np.abs(w).reshape(w.shape[0], -1).max(1) / 127
    s[s == 0] = 1
    s = s.reshape((-1,) + (1,) * (w.ndim - 1))
    return (np.clip(np.round(w / s), -127, 127) * s).astype(np.float32)


def per_run(m, base, x):
    """Nodes rounding x with the scale of its own largest |x|; returns them and the new name."""
    for c, v in (("c127", 127.0), ("ceps", 1e-30)):
        if not any(i.name == c for i in m.graph.initializer):
            m.graph.initializer.append(numpy_helper.from_array(np.array(v, np.float32), c))
    b = base.replace("/", "_")
    nodes = [helper.make_node("Abs", [x], [b + "_abs"]),
             helper.make_node("ReduceMax", [b + "_abs"], [b + "_max"], keepdims=1),
             helper.make_node("Div", [b + "_max", "c127"], [b + "_s0"]),
             helper.make_node("Max", [b + "_s0", "ceps"], [b + "_s"]),
             helper.make_node("Div", [x, b + "_s"], [b + "_d"]),
             helper.make_node("Round", [b + "_d"], [b + "_r"]),
             helper.make_node("Mul", [b + "_r", b + "_s"], [b + "_xq"])]
    return nodes, b + "_xq"


def emulate(src, variant, out):
    m = onnx.load(src)
    inits = {i.name: i for i in m.graph.initializer}
    kind, _, names = variant.partition(":")
    names = names.split(",") if names else []
    count = [0]

    def round_init(name):
        i = inits[name]
        i.CopyFrom(numpy_helper.from_array(int8_rows(numpy_helper.to_array(i).astype(np.float32)),
                                           name))

    def walk(g):
        new = []
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
            if kind in ("w", "wa") and n.op_type == "Conv" and n.input[1] in inits and \
                    ("all" in names or any(k in n.name for k in names)):
                q = n.input[1] + "_int8"
                if q not in inits:
                    t = numpy_helper.from_array(
                        int8_rows(numpy_helper.to_array(inits[n.input[1]]).astype(np.float32)), q)
                    m.graph.initializer.append(t)
                    inits[q] = t
                n.input[1] = q
                if kind == "wa":
                    nodes, n.input[0] = per_run(m, n.name, n.input[0])
                    new += nodes
                count[0] += 1
            if kind == "lstm-wa" and n.op_type == "LSTM":
                for k in (0, 5):
                    nodes, n.input[k] = per_run(m, f"{n.name}_{k}", n.input[k])
                    new += nodes
                count[0] += 1
            new.append(n)
        del g.node[:]
        g.node.extend(new)

    if kind.startswith("lstm"):
        for name in inits:
            if name.endswith(("rnn.weight_ih", "rnn.weight_hh")):
                round_init(name)
                count[0] += 1
    walk(m.graph)
    if not count[0]:
        sys.exit(f"vad_emulate: variant '{variant}' changed nothing")
    onnx.save(m, out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--model", default=os.path.expanduser("~/.cache/q8/models/silero_vad.onnx"))
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("variants", nargs="+")
    a = ap.parse_args()
    q8run = os.path.join(a.build, "q8run")
    with tempfile.TemporaryDirectory() as work:
        sr = os.path.join(work, "sr.npy")
        np.save(sr, np.array(vad_check.SR, np.int64))
        models = []
        for i, v in enumerate(a.variants):
            models.append((v, os.path.join(work, f"emu{i}.onnx")))
            emulate(a.model, v, models[-1][1])
        for seed in (int(s) for s in a.seeds.split(",")):
            wav, _ = vad_check.audio(seed)
            fp = vad_check.stream(q8run, a.model, wav, work, sr)
            for v, path in models:
                d = np.abs(vad_check.stream(q8run, path, wav, work, sr) - fp)
                print(f"{v:24s} stream seed {seed}: max |INT8 - FP32| {d.max():.4f} "
                      f"(chunk {int(d.argmax())}), mean {d.mean():.4f}")


if __name__ == "__main__":
    main()
