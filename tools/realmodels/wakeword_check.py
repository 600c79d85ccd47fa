#!/usr/bin/python3
"""The wake-word head (kit model oww_hey_jarvis) in FP32: q8 and ONNX Runtime
against a float64 reference written here in numpy from the model's own
weights (its two networks: Flatten, Gemm, LayerNorm written out, ReLU, twice,
Gemm, sigmoid; the If takes the verifier's score when the first one is >=
0.5), on the kit's held-out samples.

  wakeword_check.py [--build DIR]

Prints how many samples take the verifier branch and, per runtime, the
largest absolute and relative difference of the score from the float64
one. Needs the kit's inputs (make_inputs.py --only
oww_hey_jarvis) and ONNX Runtime (tools/ort, npm ci).
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kit  # noqa: E402
import runner  # noqa: E402


def weights(path):
    import onnx
    from onnx import numpy_helper
    m = onnx.load(path)
    w = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in m.graph.initializer}
    for n in m.graph.node:   # the verifier's weights live in the then-branch
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                w.update({t.name: numpy_helper.to_array(t).astype(np.float64)
                          for t in a.g.initializer})
    return w


def network(w, prefix, x):
    def norm(h, g, b):
        d = h - h.mean(-1, keepdims=True)
        return d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-5) * g + b
    h = x.reshape(1, -1) @ w[prefix + ".1.weight"].T + w[prefix + ".1.bias"]
    h = np.maximum(norm(h, w[prefix + ".2.weight"], w[prefix + ".2.bias"]), 0)
    h = h @ w[prefix + ".4.weight"].T + w[prefix + ".4.bias"]
    h = np.maximum(norm(h, w[prefix + ".5.weight"], w[prefix + ".5.bias"]), 0)
    z = h @ w[prefix + ".7.weight"].T + w[prefix + ".7.bias"]
    return 1 / (1 + np.exp(-z))


def reference(w, x):
    """(score, first network's score) in float64."""
    p1 = float(network(w, "model", x).ravel()[0])
    return (float(network(w, "verifier_model", x).ravel()[0]) if p1 >= 0.5 else p1), p1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    a = ap.parse_args()
    m = kit.model("oww_hey_jarvis")
    files = runner.samples(m.inputs("heldout"))
    if not files:
        raise SystemExit("wakeword_check: no held-out inputs: run make_inputs.py "
                         "--only oww_hey_jarvis first")
    w = weights(m.onnx())
    ref = [reference(w, np.load(f).astype(np.float64)) for f in files]
    q8run = kit.find_tool(a.build, "q8run")
    ort = [os.path.join(kit.TOP, "tools", "ort", "run_ort.js")]
    res = {"q8": [], "ort": []}
    with tempfile.TemporaryDirectory() as d:
        for f in files:
            for name, cmd in (("q8", [q8run]), ("ort", ["node"] + ort)):
                out = os.path.join(d, name)
                subprocess.run(cmd + [m.onnx(), "--input", f"{m.input_name}={f}", "--out", out],
                               check=True, stdout=subprocess.DEVNULL)
                res[name].append(float(np.load(os.path.join(out, "53.npy")).ravel()[0]))
    taken = sum(p1 >= 0.5 for _, p1 in ref)
    print(f"{len(files)} held-out samples; the If takes the verifier on {taken} "
          f"(float64 reference)")
    for name, got in res.items():
        r = np.array([s for s, _ in ref])
        g = np.array(got)
        rel = np.abs(g - r) / np.maximum(np.abs(r), 1e-30)
        print(f"{name}: score vs float64: max abs {np.max(np.abs(g - r)):.2e}, "
              f"max rel {np.max(rel):.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
