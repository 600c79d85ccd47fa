import onnx, sys, collections
from onnx import numpy_helper
for p in sys.argv[1:]:
    m = onnx.load(p)
    g = m.graph
    print("=====", p)
    print("ir", m.ir_version, "opsets", [(o.domain, o.version) for o in m.opset_import], "producer", m.producer_name, m.producer_version)
    inits = {i.name for i in g.initializer}
    def shp(v):
        t = v.type.tensor_type
        return (onnx.TensorProto.DataType.Name(t.elem_type), [d.dim_param or d.dim_value for d in t.shape.dim])
    for v in g.input:
        if v.name not in inits: print("  in ", v.name, shp(v))
    for v in g.output: print("  out", v.name, shp(v))
    ops = collections.Counter()
    def walk(gr, pre=""):
        for n in gr.node:
            ops[n.op_type] += 1
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH: walk(a.g)
                for sg in a.graphs: walk(sg)
    walk(g)
    print("  ops", dict(ops.most_common()))
    dt = collections.Counter(onnx.TensorProto.DataType.Name(i.data_type) for i in g.initializer)
    nparam = sum(int(__import__('numpy').prod(i.dims)) for i in g.initializer)
    print("  init dtypes", dict(dt), "params", nparam)
