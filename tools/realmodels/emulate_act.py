#!/usr/bin/python3
"""Fake-quantized INT8 of a kit model (ppocr_rec unless --model) in ONNX Runtime:
activation schemes measured before any kernel is written (docs/accuracy.md,
"Asymmetric activations").

  emulate_act.py [--work DIR] [--model NAME [--fused]] VARIANT...

The ONNX model gets q8's INT8 weights (per output channel, symmetric, 127
levels) written back as floats, and a QuantizeLinear / DequantizeLinear pair
(ORT's com.microsoft domain: the model is opset 9) on each tensor q8's rewrite
makes INT8 with its defaults: the activation inputs of Conv and MatMul, and
their outputs where a consumer takes INT8 (Conv, MatMul, Relu, Clip,
Sigmoid, HardSigmoid, views; scalar Add/Mul/... are FP32 by default). Ranges
come from 2048-bin histograms of the calibration split. BatchNorm is not
folded (per-channel weight scales make that the same); no equalization.

Variants: sym (int8, the MSE threshold: q8's choice for this model), symmm
(int8, max |x|), asym (uint8 with a zero point, MSE over both ends), asymclip
(uint8: sym's upper threshold, the lower end at the data's minimum), w8 (INT8
weights, FP32 activations), noiseDB (FP32, Gaussian noise at DB dB SQNR added
to each input), usym (uint8 with zero point 0 on the tensors that are never
negative in calibration, 255 levels up to an MSE threshold; sym elsewhere:
issue 9's unsigned activations), w8sum (as w8, each weight row rounded so
that its sum is kept: the nearest rounding, then the taps whose rounding
moved them most moved one level back until the row's sum is the nearest
multiple of its scale to the FP32 sum), wsweep (each Conv / MatMul's INT8
weights alone, everything else FP32: one line per layer, the worst
first); SCHEME-dw16 (sym-dw16, w8-dw16, ...): as SCHEME with the depthwise
Convs' weights at 16 bits (32767 levels a side). Prints output SQNR and the recognition
metrics of table.py (against FP32, and against the rendered text of each
line); for another --model, the worst output's SQNR and table.py's task
metrics. Weights may be initializers or Constant nodes. --fused: a Conv whose
only reader is a Relu or Clip is one INT8 tensor after the activation, as
q8's fusion makes it (off for ppocr_rec's recorded numbers).
Needs ONNX Runtime: tools/ort (npm ci) or $Q8_ORT_DIR.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kit  # noqa: E402
import make_inputs  # noqa: E402
import metrics  # noqa: E402

INT8_OPS = {"Conv", "MatMul", "Clip", "Relu", "Sigmoid", "HardSigmoid", "Transpose",
            "Reshape", "Squeeze", "Slice", "Concat", "MaxPool"}


def ort(model, mode, out, files):
    r = subprocess.run(["node", os.path.join(HERE, "ort_many.js"), model, mode, out] + files,
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"emulate_act: {r.stderr.strip()}")


def quant_points(g, const, fused=False):
    cons = {}
    for n in g.node:
        for i in n.input:
            cons.setdefault(i, []).append(n)
    pts = []
    for n in g.node:
        if n.op_type not in ("Conv", "MatMul"):
            continue
        pts += [i for i in n.input[:2] if i not in const and i not in pts]
        o = n.output[0]
        if fused and len(cons.get(o, [])) == 1 and cons[o][0].op_type in ("Relu", "Clip") \
                and o not in {x.name for x in g.output}:
            continue   # q8 fuses the activation: its output is the INT8 tensor
        if len(cons.get(o, [])) == 1 and cons[o][0].op_type == "BatchNormalization":
            o = cons[o][0].output[0]   # q8 folds it: the INT8 tensor is after it
        if any(c.op_type in INT8_OPS for c in cons.get(o, [])) and o not in pts:
            pts.append(o)
    return pts


# ---- ranges from a histogram: (dtype, scale, zero point) --------------------

def centres(e):
    w = (e["max"] - e["min"]) / len(e["hist"]) or 1.0
    return e["min"] + (np.arange(len(e["hist"])) + 0.5) * w, np.array(e["hist"], np.float64)


def sq_err(x, h, lo, s, n):
    q = np.clip(np.round((x - lo) / s), 0, n)
    return float(np.sum(h * (x - (lo + q * s)) ** 2))


def sym(e):
    x, h = centres(e)
    a = max(abs(e["min"]), abs(e["max"]))
    t = min((sq_err(x, h, -t, t / 127, 254), t) for t in a * np.linspace(0.05, 1, 96))[1]
    return "s8", t / 127, 0


def symmm(e):
    return "s8", max(abs(e["min"]), abs(e["max"])) / 127, 0


def u8(lo, hi):
    s = (hi - lo) / 255
    return "u8", s, int(np.clip(np.round(-lo / s), 0, 255))


def asym(e):
    x, h = centres(e)
    lo0, hi0 = min(e["min"], 0.0), max(e["max"], 0.0)
    best = (np.inf, None)
    for fl in np.linspace(0.1, 1, 19):
        for fh in np.linspace(0.05, 1, 40):
            _, s, z = u8(lo0 * fl, hi0 * fh)
            err = sq_err(x, h, -z * s, s, 255)
            if err < best[0]:
                best = (err, ("u8", s, z))
    return best[1]


def asymclip(e):
    hi = 127 * sym(e)[1]
    return u8(max(min(e["min"], 0.0), -hi), hi)


def usym(e):
    if e["min"] < 0:
        return sym(e)
    x, h = centres(e)
    t = min((sq_err(x, h, 0.0, t / 255, 255), t) for t in e["max"] * np.linspace(0.05, 1, 96))[1]
    return "u8", t / 255, 0


SCHEMES = {"sym": sym, "symmm": symmm, "asym": asym, "asymclip": asymclip, "usym": usym,
           "w8": None}


def round_row(w, keep_sum):
    """One row's INT8 weights (max |w| / 127), as floats; keep_sum: the sum
    kept as well as a whole number of levels can."""
    a = np.max(np.abs(w))
    if a == 0:
        return w
    s = a / 127
    v = w / s
    q = np.clip(np.round(v), -127, 127)
    if keep_sum:
        k = int(np.round(v.sum() - q.sum()))
        frac = v - q
        if k > 0:
            q[[i for i in np.argsort(-frac) if q[i] < 127][:k]] += 1
        elif k < 0:
            q[[i for i in np.argsort(frac) if q[i] > -127][:-k]] -= 1
    return q * s


def int8_weights(w, ax, keep_sum=False, lv=127):
    """w's INT8 weights per output channel (axis ax), written back as floats;
    lv: the levels each side (32767: 16-bit weights)."""
    if not keep_sum or lv != 127:
        a = np.max(np.abs(w), axis=tuple(i for i in range(w.ndim) if i != ax), keepdims=True)
        s = np.where(a > 0, a / lv, 1)
        return (np.clip(np.round(w / s), -lv, lv) * s).astype(np.float32)
    m = np.moveaxis(w, ax, 0)
    r = np.stack([round_row(row, True) for row in m.reshape(m.shape[0], -1).astype(np.float64)])
    return np.moveaxis(r.reshape(m.shape), 0, ax).astype(np.float32)


def depthwise(n, cval):
    w = cval.get(n.input[1]) if n.op_type == "Conv" else None
    g = [a.i for a in n.attribute if a.name == "group"]
    return w is not None and w.ndim >= 3 and w.shape[1] == 1 and g and g[0] == w.shape[0] > 1


def build(src, out, cval, pts, st, scheme, keep_sum=False, only=None, dw16=False):
    m = onnx.load(src)
    g = m.graph
    axis, wide = {}, set()
    for n in g.node:
        if n.op_type in ("Conv", "MatMul") and n.input[1] in cval:
            axis[n.input[1]] = 0 if n.op_type == "Conv" else cval[n.input[1]].ndim - 1
            if dw16 and depthwise(n, cval):
                wide.add(n.input[1])
    if only is not None:
        axis = {k: v for k, v in axis.items() if k == only}
    for t in g.initializer:                # INT8 weights, per output channel
        if t.name in axis:
            t.CopyFrom(numpy_helper.from_array(
                int8_weights(cval[t.name], axis[t.name], keep_sum,
                             32767 if t.name in wide else 127), t.name))
    for n in g.node:
        if n.op_type == "Constant" and n.output[0] in axis:
            o = n.output[0]
            n.attribute[0].t.CopyFrom(numpy_helper.from_array(
                int8_weights(cval[o], axis[o], False, 32767 if o in wide else 127), o))
    qdq = {}
    for p in pts if scheme else []:
        kind, s, z = scheme(st[p])
        zt = np.array(z, np.uint8 if kind == "u8" else np.int8)
        qdq[p] = [helper.make_node("Constant", [], [p + "_qs"],
                                   value=numpy_helper.from_array(np.array(s, np.float32))),
                  helper.make_node("Constant", [], [p + "_qz"], value=numpy_helper.from_array(zt)),
                  helper.make_node("QuantizeLinear", [p, p + "_qs", p + "_qz"], [p + "_q"],
                                   domain="com.microsoft"),
                  helper.make_node("DequantizeLinear", [p + "_q", p + "_qs", p + "_qz"],
                                   [p + "_dq"], domain="com.microsoft")]
    for n in g.node:
        for k, i in enumerate(n.input):
            if i in qdq:
                n.input[k] = i + "_dq"
    nodes = list(qdq.get(g.input[0].name, []))
    for n in g.node:
        nodes.append(n)
        for o in n.output:
            nodes += qdq.get(o, [])
    del g.node[:]
    g.node.extend(nodes)
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(m, out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("variants", nargs="+")
    ap.add_argument("--work", default="/tmp/q8_emulate_act")
    ap.add_argument("--model", default="ppocr_rec")
    ap.add_argument("--fused", action="store_true")
    a = ap.parse_args()
    m = kit.model(a.model)
    rec = m.name == "ppocr_rec"
    src, work = m.onnx(), os.path.join(a.work, "" if rec else m.name)
    os.makedirs(work, exist_ok=True)
    calib = sorted(glob.glob(os.path.join(m.inputs("calib"), "*.npy")))
    held = sorted(glob.glob(os.path.join(m.inputs("heldout"), "*.npy")))
    with open(os.path.join(m.inputs("heldout"), "meta.json"), encoding="utf-8") as f:
        truth = [s.get("text") for s in json.load(f)["samples"]]
    keys = make_inputs.dictionary()
    g = onnx.load(src).graph
    cval = {n.output[0]: numpy_helper.to_array(n.attribute[0].t)
            for n in g.node if n.op_type == "Constant"}
    cval.update({t.name: numpy_helper.to_array(t) for t in g.initializer})
    const = set(cval) | {i.name for i in g.initializer}
    pts = quant_points(g, const, a.fused)
    stats = os.path.join(work, "stats.json")
    if not os.path.exists(stats):
        sm = onnx.load(src)
        sm.graph.output.extend(helper.make_tensor_value_info(p, TensorProto.FLOAT, None)
                               for p in pts)
        onnx.save(sm, os.path.join(work, "stats.onnx"))
        ort(os.path.join(work, "stats.onnx"), "stats", stats, calib)
    with open(stats) as f:
        st = json.load(f)

    def outputs(model, files, tag):
        if rec:
            ort(model, "run", os.path.join(work, tag), files)
            return [np.load(os.path.join(work, tag, "%04d.npy" % i)) for i in range(len(files))]
        ort(model, "runall", os.path.join(work, tag), files)
        return [[np.load(os.path.join(work, tag, "%04d" % i, "%d.npy" % k))
                 for k in range(len(g.output))] for i in range(len(files))]

    ref = outputs(src, held, "fp32")
    print(f"{m.name}: {len(pts)} INT8 tensors, {len(calib)} calibration, "
          f"{len(held)} held-out samples")
    for v in a.variants:
        if v.startswith("noise"):
            db, files, rs = float(v[5:]), [], np.random.RandomState(1)
            os.makedirs(os.path.join(work, v + "_in"), exist_ok=True)
            for i, f in enumerate(held):
                x = np.load(f)
                n = rs.randn(*x.shape).astype(np.float32)
                n *= np.sqrt(np.mean(x ** 2) / np.mean(n ** 2) / 10 ** (db / 10))
                files.append(os.path.join(work, v + "_in", "%04d.npy" % i))
                np.save(files[-1], x + n)
            got = outputs(src, files, v)
        elif v in SCHEMES or v == "w8sum" or v.endswith("-dw16") and v[:-5] in SCHEMES:
            q = os.path.join(work, v + ".onnx")
            build(src, q, cval, pts, st, SCHEMES.get(v.replace("-dw16", "")),
                  keep_sum=v == "w8sum", dw16=v.endswith("-dw16"))
            got = outputs(q, held, v)
        elif v == "wsweep":
            rows = []
            for n in g.node:
                if n.op_type in ("Conv", "MatMul") and len(n.input) > 1 and n.input[1] in cval:
                    q = os.path.join(work, "wsweep.onnx")
                    build(src, q, cval, pts, st, None, only=n.input[1])
                    got = outputs(q, held, "wsweep")
                    worst = min(metrics.sqnr_db([r[k] for r in ref], [x[k] for x in got])
                                for k in range(len(ref[0]))) if not rec else \
                        metrics.sqnr_db(ref, got)
                    rows.append((worst, n.name or n.output[0], cval[n.input[1]].shape))
            for worst, name, shape in sorted(rows):
                print(f"wsweep    {name:24s} {str(tuple(shape)):20s} worst output SQNR "
                      f"{worst:5.1f} dB", flush=True)
            continue
        else:
            sys.exit(f"emulate_act: unknown variant '{v}' "
                     "(sym, symmm, asym, asymclip, usym, w8, w8sum, wsweep, noiseDB, SCHEME-dw16)")
        if not rec:
            import table
            r = table.task_metrics(m, ref, got, keys)
            print(f"{v:9s} worst output SQNR {r['sqnr_db']:5.1f} dB  {table.fmt_task(m, r)}",
                  flush=True)
            continue
        r = metrics.recognition(ref, got, keys, truth)
        print(f"{v:9s} SQNR {metrics.sqnr_db(ref, got):5.1f} dB  CER vs FP32 {100 * r['cer']:5.2f}%"
              f"  on the {r['lines_read_fp32']} lines FP32 reads right {100 * r['cer_read']:5.2f}%"
              f"  vs text {100 * r['cer_truth']:5.2f}% (FP32 {100 * r['cer_truth_fp32']:5.2f}%)",
              flush=True)


if __name__ == "__main__":
    main()
