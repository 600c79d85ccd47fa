#!/usr/bin/python3
"""Write spectral front-end models for tools/bench/cpu_vs_ort.py: each
MODEL.onnx with MODEL.inputs/NAME.npy beside it (cpu_vs_ort.py's layout).

  make_spectral_models.py OUTDIR

- stft400: 10 s of 16 kHz audio, 400-point Hann frames every 160 samples
  (a speech front end's 25 ms / 10 ms), onesided: 998 x 201 bins.
- stft512: the same signal, 512-point frames every 128 samples.
- dft441: 200 rows of 441 points (3^2 7^2), real, onesided, axis 1.
- dft1009: 200 rows of 1009 points (a prime: q8's chirp-z path).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(0)
F = TensorProto.FLOAT


def write(name, node, x, inits, opset=17):
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("x", F, list(x.shape))],
                          [helper.make_tensor_value_info("y", F, None)],
                          [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), f"{out}/{name}.onnx")
    os.makedirs(f"{out}/{name}.inputs", exist_ok=True)
    np.save(f"{out}/{name}.inputs/x.npy", x)


sig = rng.standard_normal((1, 160000, 1)).astype(np.float32)
for frame, step in ((400, 160), (512, 128)):
    write(f"stft{frame}", helper.make_node("STFT", ["x", "step", "w", "len"], ["y"]), sig,
          {"step": np.array(step, np.int64), "w": np.hanning(frame).astype(np.float32),
           "len": np.array(frame, np.int64)})
for n in (441, 1009):
    write(f"dft{n}", helper.make_node("DFT", ["x", "n", "axis"], ["y"], onesided=1),
          rng.standard_normal((200, n, 1)).astype(np.float32),
          {"n": np.array(n, np.int64), "axis": np.array(1, np.int64)}, opset=20)
