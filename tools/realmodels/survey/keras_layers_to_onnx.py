"""Minimal Keras layers-model (TF.js) -> ONNX for the UpscalerJS ESRGAN models.
usage: keras_layers_to_onnx.py model.json out.onnx
Handles InputLayer, Conv2D(same, linear/relu), Activation(relu), Concatenate(axis 3),
Add, UpSampling2D(nearest). Keeps NHWC at the interface (Transpose in/out) like tf2onnx."""
import json, sys, os, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
src, out = sys.argv[1], sys.argv[2]
m = json.load(open(src)); d = os.path.dirname(src)
blob = b"".join(open(os.path.join(d, p), "rb").read() for g in m["weightsManifest"] for p in g["paths"])
W = {}; off = 0
for g in m["weightsManifest"]:
    for w in g["weights"]:
        n = int(np.prod(w["shape"])); W[w["name"]] = np.frombuffer(blob, np.float32, n, off).reshape(w["shape"]); off += 4 * n
layers = m["modelTopology"]["model_config"]["config"]["layers"]
nodes, inits = [], []
inp = None
for l in layers:
    c, name = l["class_name"], l["name"]; cfg = l["config"]
    ins = [x[0] for x in l["inbound_nodes"][0]] if l["inbound_nodes"] else []
    if c == "InputLayer":
        inp = name
        nodes.append(helper.make_node("Transpose", [name + "_nhwc"], [name], perm=[0, 3, 1, 2])); continue
    if c == "Conv2D":
        k = W[name + "/kernel"]; kh, kw = k.shape[:2]
        assert list(cfg["strides"]) == [1, 1] and list(cfg.get("dilation_rate", [1, 1])) == [1, 1]
        ph, pw = (kh // 2, kw // 2) if cfg["padding"] == "same" else (0, 0)
        inits.append(numpy_helper.from_array(np.ascontiguousarray(k.transpose(3, 2, 0, 1)), name + "_W"))
        inits.append(numpy_helper.from_array(W[name + "/bias"].copy(), name + "_B"))
        act = cfg["activation"]; o = name if act == "linear" else name + "_pre"
        nodes.append(helper.make_node("Conv", [ins[0], name + "_W", name + "_B"], [o], kernel_shape=[kh, kw], pads=[ph, pw, ph, pw]))
        if act == "relu": nodes.append(helper.make_node("Relu", [o], [name]))
        else: assert act == "linear", act
    elif c == "Activation":
        assert cfg["activation"] == "relu"; nodes.append(helper.make_node("Relu", ins, [name]))
    elif c == "Concatenate":
        assert cfg["axis"] in (3, -1); nodes.append(helper.make_node("Concat", ins, [name], axis=1))
    elif c == "Add":
        acc = ins[0]
        for i, x in enumerate(ins[1:]):
            o = name if i == len(ins) - 2 else f"{name}_{i}"; nodes.append(helper.make_node("Add", [acc, x], [o])); acc = o
    elif c == "UpSampling2D":
        s = cfg["size"]; assert cfg["interpolation"] == "nearest"
        inits.append(numpy_helper.from_array(np.array([1, 1, s[0], s[1]], np.float32), name + "_scales"))
        nodes.append(helper.make_node("Resize", [ins[0], "", name + "_scales"], [name], mode="nearest",
                                      coordinate_transformation_mode="asymmetric", nearest_mode="floor"))
    else:
        raise SystemExit("unhandled " + c)
last = layers[-1]["name"]
outs = m["modelTopology"]["model_config"]["config"]["output_layers"][0][0]
nodes.append(helper.make_node("Transpose", [outs], [outs + "_nhwc"], perm=[0, 2, 3, 1]))
g = helper.make_graph(nodes, "esrgan", [helper.make_tensor_value_info(inp + "_nhwc", TensorProto.FLOAT, ["N", "H", "W", 3])],
                      [helper.make_tensor_value_info(outs + "_nhwc", TensorProto.FLOAT, ["N", "H2", "W2", 3])], inits)
mo = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="survey keras_layers_to_onnx.py")
mo.ir_version = 7
onnx.checker.check_model(mo); onnx.save(mo, out); print(out, len(nodes), "nodes")
