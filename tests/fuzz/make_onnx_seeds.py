#!/usr/bin/env python3
"""Write small ONNX models of the ops added for conformance on 2026-11-28
into tests/fuzz/seeds_onnx (one op each, constants where q8 needs them), so
that fuzz_onnx mutates their attributes, shapes and constants from a model
that loads and runs. Run with python3-onnx:

    python3 tests/fuzz/make_onnx_seeds.py tests/fuzz/seeds_onnx
"""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

out = sys.argv[1]
F, I64 = TensorProto.FLOAT, TensorProto.INT64
vi = helper.make_tensor_value_info


def model(name, nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), f"{out}/{name}.onnx")


def c(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


model("op_sce_loss",
      [helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t", "w"], ["y", "lp"], reduction="mean",
                        ignore_index=-1)],
      [vi("x", F, [2, 3, 4]), vi("t", I64, [2, 4])], [vi("y", F, []), vi("lp", F, [2, 3, 4])],
      [c("w", np.array([1, 2, 0.5], np.float32))])
model("op_nll_loss",
      [helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], reduction="none")],
      [vi("x", F, [3, 5]), vi("t", I64, [3])], [vi("y", F, [3])])
model("op_maxunpool",
      [helper.make_node("MaxUnpool", ["x", "i", "s"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
      [vi("x", F, [1, 1, 2, 2]), vi("i", I64, [1, 1, 2, 2])], [vi("y", F, [1, 1, 5, 5])],
      [c("s", np.array([1, 1, 5, 5], np.int64))])
model("op_roialign",
      [helper.make_node("RoiAlign", ["x", "r", "b"], ["y"], output_height=2, output_width=3,
                        sampling_ratio=0, spatial_scale=0.5, mode="max")],
      [vi("x", F, [2, 3, 6, 6]), vi("r", F, [2, 4]), vi("b", I64, [2])], [vi("y", F, [2, 3, 2, 3])])
model("op_tfidf",
      [helper.make_node("TfIdfVectorizer", ["x"], ["y"], mode="TFIDF", min_gram_length=1,
                        max_gram_length=2, max_skip_count=2, ngram_counts=[0, 3],
                        ngram_indexes=[0, 1, 2, 3, 4], pool_int64s=[2, 3, 5, 2, 3, 5, 7],
                        weights=[1.0, 2.0, 3.0, 4.0, 5.0])],
      [vi("x", I64, [2, 6])], [vi("y", F, [2, 5])], opset=9)
model("op_dft",
      [helper.make_node("DFT", ["x", "n", "a"], ["y"], onesided=1)],
      [vi("x", F, [2, 10, 1])], [vi("y", F, [2, 7, 2])],
      [c("n", np.array(12, np.int64)), c("a", np.array(1, np.int64))], opset=20)
model("op_stft",
      [helper.make_node("STFT", ["x", "step", "w", "len"], ["y"])],
      [vi("x", F, [1, 32, 1])], [vi("y", F, [1, 7, 5, 2])],
      [c("step", np.array(4, np.int64)), c("w", np.hanning(8).astype(np.float32)),
       c("len", np.array(8, np.int64))])
model("op_melweightmatrix",
      [helper.make_node("MelWeightMatrix", ["m", "n", "sr", "lo", "hi"], ["y"])],
      [], [vi("y", F, [9, 4])],
      [c("m", np.array(4, np.int64)), c("n", np.array(16, np.int64)),
       c("sr", np.array(8000, np.int64)), c("lo", np.array(0, np.float32)),
       c("hi", np.array(4000, np.float32))])
