#!/usr/bin/python3
"""ONNX Runtime's own INT8 for the benchmark: the QDQ model quantize_static makes.

  ort_qdq.py MODEL.onnx -o OUT.onnx (--calib DIR | --input [NAME=]FILE...)

What onnxruntime.quantization.quantize_static(model, out, reader,
quant_format=QDQ, per_channel=True, activation_type=QInt8,
weight_type=QInt8, calibrate_method=MinMax) writes after quant_pre_process,
rebuilt with python3-onnx (ORT's Python package cannot be installed here):

- BatchNormalization after a Conv folded into it (quant_pre_process);
- MinMax calibration: every float tensor made a graph output and run by ORT
  itself (tools/ort/run_ort.js) on each sample; ranges widened to hold 0;
- a Relu or Clip whose input feeds nothing else is removed and its input
  takes its output's range (ORT's _adjust_tensor_ranges + removable
  activations);
- per-channel symmetric int8 weights of Conv, ConvTranspose, Gemm and MatMul
  (scale = 2 max|w| / 255), int32 biases at x_scale * w_scale;
- a QuantizeLinear / DequantizeLinear pair (int8, asymmetric, MinMax) on
  every float input and output of the ops ORT quantizes by default;
  other float constants feeding them stored as int8 + DequantizeLinear.

ORT then fuses DQ -> op -> Q into its QLinear* kernels at load. Models below
opset 13 are converted to 13 first (per-channel QuantizeLinear needs it).
--calib DIR: as quantize's --calib (each .npy file one sample of the single
input, or one subfolder per input name, files matched in sorted order).
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference, version_converter, TensorProto

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ort"))
import q8cmp  # noqa: E402

# ORT's default op types for QDQ (QLinearOpsRegistry + QDQRegistry), those
# with float tensors worth a QDQ pair.
QDQ_OPS = {
    "Conv", "ConvTranspose", "Gemm", "MatMul", "Add", "Mul", "Relu", "Clip", "LeakyRelu",
    "Sigmoid", "MaxPool", "AveragePool", "GlobalAveragePool", "Concat", "Resize", "Reshape",
    "Transpose", "Squeeze", "Unsqueeze", "Split", "Pad", "Softmax", "Gather", "Slice", "Where",
    "Flatten", "ArgMax", "InstanceNormalization", "LayerNormalization",
}
# The float inputs of each op that get a QDQ pair (None: all).
DATA_INPUTS = {"Reshape": [0], "Squeeze": [0], "Unsqueeze": [0], "Split": [0], "Pad": [0],
               "Gather": [0], "Slice": [0], "Resize": [0], "Where": [1, 2], "Clip": [0],
               "InstanceNormalization": [0], "LayerNormalization": [0]}
# Weight input -> per-channel axis (MatMul / Gemm decided per node).
WEIGHT_OPS = {"Conv": 0, "ConvTranspose": 1}


def samples(a, model):
    names = [i.name for i in model.graph.input
             if i.name not in {t.name for t in model.graph.initializer}]
    if a.input:
        d = {}
        for s in a.input:
            k, _, f = s.rpartition("=")
            d[k or names[0]] = f
        return [d]
    subs = [os.path.join(a.calib, n) for n in names]
    if len(names) > 1 or all(os.path.isdir(s) for s in subs):
        files = [sorted(glob.glob(os.path.join(s, "*.npy"))) for s in subs]
        return [dict(zip(names, fs)) for fs in zip(*files)]
    return [{names[0]: f} for f in sorted(glob.glob(os.path.join(a.calib, "*.npy")))]


def constants_to_initializers(model):
    """Top-level Constant nodes holding a tensor become initializers, as ORT's
    graph optimizer makes them in quant_pre_process: Paddle's exports (the
    PP-OCR models) hold every weight in a Constant node, which the weight
    rules below would otherwise not see (their weights stayed float)."""
    g = model.graph
    keep = []
    for n in g.node:
        a = n.attribute[0] if n.op_type == "Constant" and len(n.attribute) == 1 else None
        if a is not None and a.name == "value" and a.HasField("t"):
            t = onnx.TensorProto()
            t.CopyFrom(a.t)
            t.name = n.output[0]
            g.initializer.append(t)
        else:
            keep.append(n)
    del g.node[:]
    g.node.extend(keep)
    return model


def fold_bn(model):
    g = model.graph
    init = {t.name: t for t in g.initializer}
    uses = {}
    for n in g.node:
        for i in n.input:
            uses[i] = uses.get(i, 0) + 1
    prod = {o: n for n in g.node for o in n.output}
    drop = []
    for bn in g.node:
        if bn.op_type != "BatchNormalization" or len(bn.output) != 1:
            continue
        conv = prod.get(bn.input[0])
        if (conv is None or conv.op_type != "Conv" or uses.get(bn.input[0]) != 1
                or conv.input[1] not in init or any(i not in init for i in bn.input[1:])):
            continue
        sc, b, mu, var = (numpy_helper.to_array(init[i]).astype(np.float64)
                          for i in bn.input[1:])
        eps = next((x.f for x in bn.attribute if x.name == "epsilon"), 1e-5)
        f = sc / np.sqrt(var + eps)
        w = numpy_helper.to_array(init[conv.input[1]]).astype(np.float64)
        cb = (numpy_helper.to_array(init[conv.input[2]]).astype(np.float64)
              if len(conv.input) > 2 and conv.input[2] else np.zeros(w.shape[0]))
        wn, bname = conv.input[1] + "_bnfold", conv.output[0] + "_bnfold_bias"
        g.initializer.append(numpy_helper.from_array(
            (w * f.reshape(-1, *[1] * (w.ndim - 1))).astype(np.float32), wn))
        g.initializer.append(numpy_helper.from_array(((cb - mu) * f + b).astype(np.float32),
                                                     bname))
        x = conv.input[0]
        del conv.input[:]
        conv.input.extend([x, wn, bname])
        conv.output[0] = bn.output[0]
        drop.append(bn)
    for bn in drop:
        g.node.remove(bn)
    return model


def float_tensors(model):
    inf = shape_inference.infer_shapes(model)
    types = {v.name: v.type.tensor_type.elem_type
             for v in list(inf.graph.value_info) + list(inf.graph.input) + list(inf.graph.output)}
    init = {t.name for t in model.graph.initializer}
    out = []
    for n in model.graph.node:
        for o in n.output:
            if o and types.get(o) == TensorProto.FLOAT and o not in out:
                out.append(o)
    for i in model.graph.input:
        if i.name not in init and types.get(i.name) == TensorProto.FLOAT:
            out.append(i.name)
    return out


def calibrate(model, names, samples_, node):
    """{tensor: (min, max)} over the samples (widened to hold 0), by ORT on the
    model with every tensor in names made an output (through an Identity)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for k, t in enumerate(names):
        m.graph.node.append(helper.make_node("Identity", [t], [f"qdqcal_{k}"]))
        m.graph.output.append(helper.make_tensor_value_info(f"qdqcal_{k}", TensorProto.FLOAT,
                                                            None))
    with tempfile.TemporaryDirectory() as d:
        path, lst = os.path.join(d, "cal.onnx"), os.path.join(d, "samples.json")
        onnx.save(m, path)
        with open(lst, "w") as f:
            json.dump([{k: os.path.abspath(v) for k, v in s.items()} for s in samples_], f)
        js = os.path.join(os.path.dirname(q8cmp.__file__), "minmax_ort.js")
        out = subprocess.run([node, js, path, lst], check=True, stdout=subprocess.PIPE,
                             text=True).stdout
    got = json.loads(out.splitlines()[-1])
    return {t: (min(0.0, got[f"qdqcal_{k}"][0]), max(0.0, got[f"qdqcal_{k}"][1]))
            for k, t in enumerate(names) if f"qdqcal_{k}" in got}


def act_qparams(rmin, rmax):
    rmin, rmax = min(rmin, 0.0), max(rmax, 0.0)
    scale = (rmax - rmin) / 255.0 if rmax > rmin else 1.0
    zp = int(np.clip(np.round(-128 - rmin / scale), -128, 127))
    return np.float32(scale), np.int8(zp)


def names_used(g):
    """Every name a node of g reads, in its subgraphs (If branches read outer
    initializers) too, and g's outputs."""
    used = {o.name for o in g.output}
    for n in g.node:
        used.update(n.input)
        for a in n.attribute:
            for sg in list(a.graphs) + ([a.g] if a.HasField("g") else []):
                used |= names_used(sg)
    return used


def quantize(model, ranges):
    g = model.graph
    init = {t.name: t for t in g.initializer}
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    outputs = {o.name for o in g.output}
    # Removable activations: the input takes the output's range.
    for n in list(g.node):
        if (n.op_type in ("Relu", "Clip") and len(consumers.get(n.input[0], [])) == 1
                and n.input[0] in ranges and n.output[0] in ranges
                and n.output[0] not in outputs and n.input[0] not in outputs):
            ranges[n.input[0]] = ranges[n.output[0]]
            for c in consumers.get(n.output[0], []):
                for k, i in enumerate(c.input):
                    if i == n.output[0]:
                        c.input[k] = n.input[0]
            consumers[n.input[0]] = consumers.pop(n.output[0], [])
            g.node.remove(n)
    new_init, new_nodes, qdq = [], [], {}

    def const(name, arr):
        new_init.append(numpy_helper.from_array(arr, name))
        return name

    def act(t):
        if t not in qdq:
            s, z = act_qparams(*ranges[t])
            sn, zn = const(t + "_qs", np.array(s)), const(t + "_qz", np.array(z))
            new_nodes.append(helper.make_node("QuantizeLinear", [t, sn, zn], [t + "_q"]))
            new_nodes.append(helper.make_node("DequantizeLinear", [t + "_q", sn, zn],
                                              [t + "_dq"]))
            qdq[t] = t + "_dq"
        return qdq[t]

    def const_act(t):
        if t not in qdq:
            v = numpy_helper.to_array(init[t]).astype(np.float32)
            s, z = act_qparams(float(v.min()) if v.size else 0.0,
                               float(v.max()) if v.size else 0.0)
            q = np.clip(np.round(v / s) + z, -128, 127).astype(np.int8)
            sn, zn = const(t + "_qs", np.array(s)), const(t + "_qz", np.array(z))
            new_nodes.append(helper.make_node("DequantizeLinear", [const(t + "_q", q), sn, zn],
                                              [t + "_dq"]))
            qdq[t] = t + "_dq"
        return qdq[t]

    def weight(n, k, axis, x_scale):
        w = numpy_helper.to_array(init[n.input[k]]).astype(np.float32)
        axis %= w.ndim
        red = tuple(i for i in range(w.ndim) if i != axis)
        amax = np.abs(w).max(axis=red) if w.size else np.zeros(w.shape[axis])
        # a dead channel (zeros or denormals: fr_feature's are 1e-45) keeps scale 1,
        # as q8 does; 2 amax / 255 would round to 0 in float32 and make NaN weights
        s = np.where(amax >= 1e-30, 2.0 * amax / 255.0, 1.0).astype(np.float32)
        shp = [1] * w.ndim
        shp[axis] = -1
        q = np.clip(np.round(w / s.reshape(shp)), -127, 127).astype(np.int8)
        base = f"{n.name or n.output[0]}_w"
        wn = const(base + "_q", q)
        sn, zn = const(base + "_s", s), const(base + "_z", np.zeros(s.shape, np.int8))
        new_nodes.append(helper.make_node("DequantizeLinear", [wn, sn, zn], [base + "_dq"],
                                          axis=axis))
        n.input[k] = base + "_dq"
        if x_scale is not None and len(n.input) > 2 and n.input[2] in init:
            b = numpy_helper.to_array(init[n.input[2]]).astype(np.float64)
            if b.shape == s.shape:
                bs = (x_scale * s.astype(np.float64)).astype(np.float32)
                bs = np.where(bs > 0, bs, np.float32(1.0)).astype(np.float32)
                bq = np.clip(np.nan_to_num(np.round(b / bs)), -2**31, 2**31 - 1).astype(np.int32)
                bb = f"{n.name or n.output[0]}_b"
                new_nodes.append(helper.make_node(
                    "DequantizeLinear", [const(bb + "_q", bq), const(bb + "_s", bs),
                                         const(bb + "_z", np.zeros(s.shape, np.int32))],
                    [bb + "_dq"], axis=0))
                n.input[2] = bb + "_dq"

    for n in list(g.node):
        if n.op_type not in QDQ_OPS:
            continue
        waxis = WEIGHT_OPS.get(n.op_type)
        if n.op_type == "MatMul" and n.input[1] in init:
            waxis = -1
        if n.op_type == "Gemm" and n.input[1] in init:
            tb = next((x.i for x in n.attribute if x.name == "transB"), 0)
            waxis = 0 if tb else 1
        wk = 1 if waxis is not None and n.input[1] in init else None
        x_scale = (act_qparams(*ranges[n.input[0]])[0]
                   if wk is not None and n.input[0] in ranges else None)
        idx = DATA_INPUTS.get(n.op_type, range(len(n.input)))
        for k in idx:
            if k >= len(n.input) or not n.input[k]:
                continue
            t = n.input[k]
            if k == wk:
                weight(n, k, waxis, x_scale)
            elif k == 2 and wk is not None:
                continue  # the bias: with the weight, or left float
            elif t in ranges:
                n.input[k] = act(t)
            elif t in init and init[t].data_type == TensorProto.FLOAT:
                n.input[k] = const_act(t)
        for o in n.output:
            if o in ranges:
                dq = act(o)
                for c in consumers.get(o, []):
                    if c.op_type in QDQ_OPS:
                        continue  # they take it through their own inputs
                    for k, i in enumerate(c.input):
                        if i == o:
                            c.input[k] = dq
    # Inputs are replaced in place; keep a topological order: each QDQ pair
    # right after its producer (weights and constants first).
    g.initializer.extend(new_init)
    order, placed = [], set()
    pend = {}
    for q in new_nodes:
        src = q.input[0]
        pend.setdefault(src, []).append(q)
    avail = {t.name for t in g.initializer} | {i.name for i in g.input}

    def emit(n):
        order.append(n)
        for o in n.output:
            for q in pend.pop(o, []):
                emit(q)

    for t in list(pend):
        if t in avail:
            for q in pend.pop(t):
                emit(q)
    for n in list(g.node):
        emit(n)
    del g.node[:]
    g.node.extend(order)
    # the float weights and biases the int8 ones replaced: quantize_static
    # writes only what the graph uses, so the file is int8-sized
    used = names_used(g)
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    return model


def ort_shapes(model, names, sample, node):
    """{tensor: shape} of the named float tensors, run by ORT on one sample."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for k, t in enumerate(names):
        m.graph.node.append(helper.make_node("Identity", [t], [f"qdqshape_{k}"]))
        m.graph.output.append(helper.make_tensor_value_info(f"qdqshape_{k}", TensorProto.FLOAT,
                                                            None))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "shapes.onnx")
        onnx.save(m, path)
        js = os.path.join(os.path.dirname(q8cmp.__file__), "run_ort.js")
        ins = [f"--input={k}={os.path.abspath(v)}" for k, v in sample.items()]
        subprocess.run([node, js, path, *ins, "--out", d], check=True,
                       stdout=subprocess.DEVNULL)
        return {t: np.load(os.path.join(d, f"qdqshape_{k}.npy"), mmap_mode="r").shape
                for k, t in enumerate(names)}


def to_opset13(model, sample, node):
    """The model at opset 13 (per-channel QDQ needs it), as quantize_static
    requires. The converter needs tensor ranks (Softmax's), which shape
    inference cannot give behind a Shape -> Cast -> Reshape (paddle2onnx):
    the float tensors it leaves without a shape get the shapes ORT gives them
    on the first sample, for the conversion only."""
    inf = shape_inference.infer_shapes(model)
    known = {v.name for v in list(inf.graph.value_info) + list(inf.graph.input)
             + list(inf.graph.output) if v.type.tensor_type.HasField("shape")}
    missing = [t for t in float_tensors(model) if t not in known]
    if missing and sample:
        for t, shape in ort_shapes(model, missing, sample, node).items():
            inf.graph.value_info.append(
                helper.make_tensor_value_info(t, TensorProto.FLOAT, list(shape)))
    out = version_converter.convert_version(inf, 13)
    del out.graph.value_info[:]
    return out


def drop_initializer_inputs(model):
    """Old exports (IR < 4, ResNet-18 at opset 9) list every initializer as a
    graph input too; at opset 13 (IR >= 7) ORT would take them as inputs the
    caller must feed. quantize_static's pre-processing drops them too."""
    model.ir_version = max(model.ir_version, 7)
    inits = {i.name for i in model.graph.initializer}
    keep = [i for i in model.graph.input if i.name not in inits]
    del model.graph.input[:]
    model.graph.input.extend(keep)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("model")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--calib")
    ap.add_argument("--input", action="append", metavar="[NAME=]FILE")
    ap.add_argument("--node", default="node")
    a = ap.parse_args()
    if bool(a.calib) == bool(a.input):
        ap.error("give --calib DIR or --input, not both")
    model = onnx.load(a.model)
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    ss = samples(a, model)
    if opset < 13:
        model = to_opset13(model, ss[0] if ss else {}, a.node)
    model = fold_bn(constants_to_initializers(model))
    drop_initializer_inputs(model)
    if not ss:
        raise SystemExit(f"{a.model}: no calibration samples")
    ranges = calibrate(model, float_tensors(model), ss, a.node)
    model = quantize(model, ranges)
    onnx.checker.check_model(model)
    tmp = a.output + ".tmp"
    onnx.save(model, tmp)
    os.replace(tmp, a.output)
    print(f"wrote {a.output}: QDQ, {len(ranges)} calibrated tensors, {len(ss)} samples")


if __name__ == "__main__":
    main()
