"""FP16 -> FP32 conversion of an ONNX model whose weights are float16 with
Casts around the compute (how imgly ships ISNet), for q8, which imports
float32 models only (until FP16 import lands: see the coverage issue).

Every float16 initializer and Constant becomes float32, every Cast to float16
casts to float32 instead (a Cast to float32 then converts nothing), declared
float16 values become float32. The arithmetic is then FP32 throughout, on
weights that are exactly the FP16 ones: this is the model's FP32 reference,
not a different model. keep_outputs drops the other graph outputs (ISNet's
deep-supervision side outputs, which imgly does not read).

Needs Debian's python3-onnx (/usr/bin/python3).
"""

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper


def _to_f32(t):
    t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float32), t.name))


def _graph(g):
    n_cast = 0
    for t in g.initializer:
        if t.data_type == TensorProto.FLOAT16:
            _to_f32(t)
    for node in g.node:
        for a in node.attribute:
            if node.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT16:
                a.i = TensorProto.FLOAT
                n_cast += 1
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == TensorProto.FLOAT16:
                _to_f32(a.t)
            if a.type == onnx.AttributeProto.GRAPH:
                n_cast += _graph(a.g)
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT16:
            vi.type.tensor_type.elem_type = TensorProto.FLOAT
    return n_cast


def convert(src, dst, keep_outputs=None):
    m = onnx.load(src)
    n_cast = _graph(m.graph)
    if keep_outputs:
        keep = [o for o in m.graph.output if o.name in keep_outputs]
        if len(keep) != len(keep_outputs):
            raise ValueError(f"{src}: outputs {keep_outputs} not all found")
        del m.graph.output[:]
        m.graph.output.extend(keep)
    onnx.save(m, dst + ".part")
    import os
    os.replace(dst + ".part", dst)
    return n_cast
