#!/usr/bin/python3
"""Self-test of the kit's pieces that need no download: the metrics on
hand-made cases, chunk reassembly and its checks, tarball unpacking that
refuses paths outside its folder, the FP16 conversion on a small model,
the pose, landmark and embedding metrics, the second set's (hand, iris,
face attributes, a score), the third set's (MoveNet's PCK, CenterNet's
detections through Human's NMS), and the TensorFlow.js conversion
on a small hand-made graph model.

  test_kit.py     (ctest: realmodels_selftest)
"""

import hashlib
import io
import json
import os
import sys
import tarfile
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fetch  # noqa: E402
import metrics  # noqa: E402

checks = []


def check(name, ok):
    checks.append((name, bool(ok)))
    print(f"{'ok  ' if ok else 'FAIL'} {name}")


def test_sqnr_cosine():
    ref = [np.array([3.0, 4.0])]
    check("sqnr of an exact copy is inf", metrics.sqnr_db(ref, ref) == float("inf"))
    # error energy 0.25 against 25: 20 dB
    check("sqnr 20 dB", abs(metrics.sqnr_db(ref, [np.array([3.0, 4.5])]) - 20.0) < 1e-9)
    check("cosine of opposite vectors is -1",
          abs(metrics.cosine(ref, [-ref[0]]) + 1) < 1e-12)


def test_components():
    m = np.zeros((6, 8), bool)
    m[0, 0:3] = True        # an L shape, joined through row 1
    m[1, 2] = True
    m[1, 5:7] = True        # a separate block
    m[2, 5:7] = True
    m[4, 0] = True          # diagonal neighbours are not 4-connected
    m[5, 1] = True
    m[3, 3:5] = True        # a U: two arms that meet only in the last row
    m[4, 3] = m[4, 4] = False
    u = np.zeros((6, 8), bool)
    u[0, 0] = u[0, 2] = u[1, 0] = u[1, 2] = True
    u[2, 0:3] = True
    sizes = sorted(len(ys) for ys, _ in metrics.components(m))
    check("components: sizes of L, block, bar, two lone pixels",
          sizes == [1, 1, 2, 4, 4])
    check("components: a U is one component",
          len(metrics.components(u)) == 1 and len(metrics.components(u)[0][0]) == 7)


def test_f1_and_boxes():
    a, b = (0, 0, 10, 10), (5, 0, 15, 10)
    check("box IoU 1/3", abs(metrics.box_iou(a, b) - 1 / 3) < 1e-12)
    same = lambda r, g: metrics.box_iou(r, g) >= 0.5  # noqa: E731
    check("F1 of two empty lists is 1", metrics.match_f1([[]], [[]], same) == 1.0)
    check("F1 2/3 with one of two found",
          abs(metrics.match_f1([[a, (20, 20, 30, 30)]], [[a]], same) - 2 / 3) < 1e-12)
    check("F1: a duplicate prediction is a false positive",
          metrics.match_f1([[a]], [[a, a]], same) == 2 / 3)
    # two references, one prediction: tp 1 (not 2), F1 2 * 1 / (2 + 1)
    check("F1: one prediction matches one reference only",
          metrics.match_f1([[a, a]], [[a]], same) == 2 / 3)
    p = np.zeros((1, 1, 40, 60), np.float32)
    p[0, 0, 10:20, 5:45] = 0.9          # a text line
    p[0, 0, 30:32, 5:7] = 0.9           # too small (2 px)
    p[0, 0, 25:29, 30:40] = 0.4         # above 0.3, a peak of 0.9, but its mean
    p[0, 0, 25:29, 39] = 0.9            # (14.4 + 3.6) / 40 = 0.45 scores below 0.6
    boxes = metrics.db_boxes(p)
    check("DB: one box kept", len(boxes) == 1)
    x0, y0, x1, y1 = boxes[0]
    d = 40 * 10 * 1.5 / (2 * 50)        # unclip distance: area * ratio / perimeter
    check("DB: box grown by the unclip distance",
          np.allclose([x0, y0, x1, y1], [5 - d, 10 - d, 45 + d, 20 + d]))
    line = np.zeros((1, 1, 40, 60), np.float32)
    line[0, 0, 10:20, 5:45] = 0.9
    q = line.copy()
    q[0, 0, 10:20, 15:45] = 0.1          # three quarters of the line lost
    r = metrics.detection([line], [q])
    check("detection: map IoU 1/4 and no box matched when 3/4 of the line is lost",
          abs(r["map_iou"] - 0.25) < 1e-9 and r["box_f1"] == 0.0)
    extra = line.copy()
    extra[0, 0, 30:35, 5:45] = 0.35       # 200 px above 0.3 that FP32 does not have
    r = metrics.detection([line], [extra])
    check("detection: map IoU 400/600 with extra pixels; the low-score blob is no box",
          abs(r["map_iou"] - 400 / 600) < 1e-9 and r["box_f1"] == 1.0)
    r = metrics.detection([line], [line * 0.8])
    check("detection: the same line at 0.72 is a perfect match",
          r["map_iou"] == 1.0 and r["box_f1"] == 1.0)


def test_ctc_cer():
    keys = ["a", "b", "c"]
    t = np.zeros((6, 5))                 # classes: blank, a, b, c, space
    for i, c in enumerate([1, 1, 0, 1, 4, 3]):
        t[i, c] = 1
    check("CTC greedy: repeats merged, blank splits, space last",
          metrics.ctc_greedy(t, keys) == "aa c")
    check("edit distance kitten/sitting = 3", metrics.edit_distance("kitten", "sitting") == 3)
    u = t.copy()
    u[5] = 0
    u[5, 2] = 1                          # c -> b
    r = metrics.recognition([t], [u], keys)
    check("CER 1/4", abs(r["cer"] - 0.25) < 1e-12 and r["lines_equal"] == 0)
    # with the rendered text: FP32 reads line 1 right and line 2 wrong ("ac"
    # for "ab"); the INT8 decode changes one character of each
    v = np.zeros((3, 5))
    for i, c in enumerate([1, 0, 3]):
        v[i, c] = 1
    w = v.copy()
    w[2] = 0
    w[2, 2] = 1                          # ac -> ab: FP32's misreading fixed
    r = metrics.recognition([t, v], [u, w], keys, truth=["aa c", "ab"])
    check("CER against the text: FP32 1/6, INT8 1/6",
          abs(r["cer_truth_fp32"] - 1 / 6) < 1e-12 and abs(r["cer_truth"] - 1 / 6) < 1e-12)
    check("CER against FP32 2/6, on the one line FP32 reads right 1/4",
          abs(r["cer"] - 2 / 6) < 1e-12 and r["lines_read_fp32"] == 1
          and abs(r["cer_read"] - 0.25) < 1e-12)


def test_edge_spaces():
    # a crop's margins decode as spaces at the line's ends: not a misreading
    keys = ["a", "b"]
    t = np.zeros((5, 4))                 # classes: blank, a, b, space
    for i, c in enumerate([3, 1, 0, 2, 3]):
        t[i, c] = 1
    check("CTC greedy keeps the spaces", metrics.ctc_greedy(t, keys) == " ab ")
    u = np.zeros((5, 4))
    for i, c in enumerate([0, 1, 0, 2, 0]):
        u[i, c] = 1
    r = metrics.recognition([t], [u], keys, truth=["ab"])
    check("recognition: spaces at the ends dropped",
          r["cer"] == 0 and r["lines_read_fp32"] == 1 and r["cer_truth_fp32"] == 0)


def test_kit_text():
    import render
    import make_inputs
    keys = [chr(c) for c in range(0x4E00, 0x9FA6)] + ["a"]
    common = render.common_cjk(keys)
    check("GB2312 level 1: 3755 everyday characters", len(common) == 3755)
    check("the common set without a character the dictionary lacks",
          len(render.common_cjk(keys[1:])) == 3754 and "一" not in
          render.common_cjk(keys[1:]))
    check("every word made of everyday characters",
          all(ch in set(common) for w in render.CJK_WORDS for ch in w))
    with tempfile.TemporaryDirectory() as d:
        check("a split not made yet has no version", make_inputs.made_version(d) is None)
        with open(os.path.join(d, "meta.json"), "w", encoding="utf-8") as f:
            json.dump({"samples": []}, f)
        check("a split without a version is the kit's first",
              make_inputs.made_version(d) == 1)
    try:
        render.check_fonts()
    except SystemExit as e:
        print(f"skip rendering checks: {e}")
        return
    # lines at most 320/48 wide: PaddleOCR never squeezes a line, a fixed
    # width would; without the limit some of these lines are wider
    rng = np.random.RandomState(7)
    wide = [render.text_line(rng, common)[0] for _ in range(40)]
    rng = np.random.RandomState(7)
    fit = [render.text_line(rng, common, max_aspect=320 / 48)[0] for _ in range(40)]
    check("some unlimited lines are wider than 320/48",
          any(i.width > 320 / 48 * i.height * 1.1 for i in wide))
    # rotation (3 degrees at most) widens the crop a little
    check("limited lines fit 320/48", all(i.width <= 320 / 48 * i.height * 1.1 for i in fit))


def test_rendered_text():
    import table

    class M:                              # a kit model whose held-out folder is d
        def __init__(self, d):
            self.d = d

        def inputs(self, split):
            return self.d
    with tempfile.TemporaryDirectory() as d:
        check("no meta.json: no text", table.rendered_text(M(d), ["a.npy"]) is None)
        with open(os.path.join(d, "meta.json"), "w", encoding="utf-8") as f:
            json.dump({"samples": [{"text": "權暴"}, {"text": "due 12"}]}, f)
        check("meta.json's texts in sample order",
              table.rendered_text(M(d), ["0.npy", "1.npy"]) == ["權暴", "due 12"])
        check("a text per sample or none", table.rendered_text(M(d), ["0.npy"]) is None)


def test_classification_segmentation():
    ref = [np.array([0.1, 0.9]), np.array([0.8, 0.2]), np.array([0.3, 0.7])]
    got = [np.array([0.2, 0.8]), np.array([0.4, 0.6]), np.array([0.6, 0.4])]
    check("agreement 1/3 (only the first argmax kept)",
          abs(metrics.classification(ref, got)["agreement"] - 1 / 3) < 1e-12)
    r = np.zeros((1, 1, 4, 4))
    r[0, 0, :2] = 0.9                    # 8 px in the reference mask
    g = np.zeros((1, 1, 4, 4))
    g[0, 0, 1:3] = 0.6                   # 8 px, 4 of them shared
    g[0, 0, 3, 0] = 0.5                  # exactly 0.5 is outside (> 0.5)
    check("mask IoU 4/12, pooled over samples: (4 + 16) / (12 + 16)",
          abs(metrics.segmentation([r], [g])["mask_iou"] - 4 / 12) < 1e-12
          and abs(metrics.segmentation([r, np.ones((4, 4))], [g, np.ones((4, 4))])["mask_iou"]
                  - 20 / 28) < 1e-12)
    check("cosine of [1, 0] and [1, 1] is 1/sqrt(2)",
          abs(metrics.cosine([np.array([1.0, 0.0])], [np.array([1.0, 1.0])])
              - 2 ** -0.5) < 1e-12)


def test_faces_lines():
    s16 = np.full((1, 512, 1), -10.0, np.float32)
    s8 = np.full((1, 384, 1), -10.0, np.float32)
    b16 = np.zeros((1, 512, 16), np.float32)
    b8 = np.zeros((1, 384, 16), np.float32)
    s8[0, 6 * 27 + 1, 0] = 3.0           # cell 27 of the 8x8 grid (x 3, y 3), anchor 1
    b8[0, 6 * 27 + 1, :4] = [0, 0, 32, 32]
    s8[0, 6 * 27 + 2, 0] = 2.0           # a weaker duplicate: removed by NMS
    b8[0, 6 * 27 + 2, :4] = [1, 1, 32, 32]
    boxes = metrics.blazeface_boxes([s16, s8, b16, b8])
    c = 3.5 / 8
    check("BlazeFace: one face at its anchor after NMS",
          len(boxes) == 1 and np.allclose(boxes[0], [c - 0.125, c - 0.125, c + 0.125, c + 0.125]))
    off = np.zeros((1, 4, 4, 4), np.float32)
    sc = np.zeros((1, 4, 4, 1), np.float32)
    sc[0, 1, 2, 0] = 0.9
    off[0, 1, 2] = [-1, 0, 1, 0]
    segs = metrics.mlsd_segments([off, sc])
    check("M-LSD: segment from the centre and offsets, in input pixels",
          segs == [(2.0, 2.0, 6.0, 2.0)])
    flipped = [off.copy(), sc]
    flipped[0][0, 1, 2] = [1, 0, -1, 0]  # same segment, endpoints swapped
    check("M-LSD: endpoint order does not matter",
          metrics.lines([[off, sc]], [flipped])["segment_f1"] == 1.0)


def test_reassemble():
    with tempfile.TemporaryDirectory() as d:
        parts = [b"x" * 10, b"y" * 10, b"z" * 3]
        os.makedirs(os.path.join(d, "dist"))
        chunks, pos = [], 0
        for p in parts:
            h = hashlib.sha256(p).hexdigest()
            with open(os.path.join(d, "dist", h), "wb") as f:
                f.write(p)
            chunks.append({"hash": h, "offsets": [pos, pos + len(p)]})
            pos += len(p)
        idx = {"/m": {"chunks": chunks, "size": pos}}
        spec = {"index": "dist/r.json", "key": "/m", "dir": "dist"}

        def write_index():
            with open(os.path.join(d, "dist", "r.json"), "w") as f:
                json.dump(idx, f)

        write_index()
        out = os.path.join(d, "out.bin")
        fetch.reassemble(d, spec, out)
        check("chunks reassembled in order", open(out, "rb").read() == b"".join(parts))
        idx["/m"]["size"] = pos + 1
        write_index()
        try:
            fetch.reassemble(d, spec, out)
            check("a wrong total size is refused", False)
        except fetch.FetchError:
            check("a wrong total size is refused", True)
        idx["/m"]["size"] = pos
        write_index()
        with open(os.path.join(d, "dist", chunks[1]["hash"]), "wb") as f:
            f.write(b"Y" * 10)
        try:
            fetch.reassemble(d, spec, out)
            check("a chunk whose content does not match its hash is refused", False)
        except fetch.FetchError:
            check("a chunk whose content does not match its hash is refused", True)


def test_unpack():
    with tempfile.TemporaryDirectory() as d:
        tgz = os.path.join(d, "bad.tgz")
        with tarfile.open(tgz, "w:gz") as t:
            data = b"evil"
            ti = tarfile.TarInfo("package/../../evil.txt")
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
        try:
            fetch.unpack(tgz, os.path.join(d, "pkg"))
            check("a tarball member outside its folder is refused", False)
        except fetch.FetchError:
            check("a tarball member outside its folder is refused",
                  not os.path.exists(os.path.join(d, "evil.txt")))


def test_convert_fp16():
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        print("skip FP16 conversion: python3-onnx is not installed")
        return
    import convert_fp16
    w = np.array([[1.5, -2.25]], np.float16)
    g = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["xh"], to=TensorProto.FLOAT16),
         helper.make_node("MatMul", ["xh", "w"], ["yh"]),
         helper.make_node("Cast", ["yh"], ["y"], to=TensorProto.FLOAT),
         helper.make_node("Identity", ["yh"], ["side"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2]),
         helper.make_tensor_value_info("side", TensorProto.FLOAT16, [1, 2])],
        [numpy_helper.from_array(w, "w")])
    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "h.onnx"), os.path.join(d, "f.onnx")
        onnx.save(helper.make_model(g), src)
        n = convert_fp16.convert(src, dst, keep_outputs=["y"])
        m = onnx.load(dst)
        wt = numpy_helper.to_array(m.graph.initializer[0])
        casts = [a.i for nd in m.graph.node if nd.op_type == "Cast" for a in nd.attribute]
        check("FP16 conversion: weights float32 and equal, Casts to float32, side output gone",
              n == 1 and wt.dtype == np.float32 and np.array_equal(wt, w.astype(np.float32))
              and casts == [TensorProto.FLOAT, TensorProto.FLOAT]
              and [o.name for o in m.graph.output] == ["y"])


def test_pose_landmarks_embedding():
    heat = np.full((1, 3, 3, 17), -5.0, np.float32)
    off = np.zeros((1, 3, 3, 34), np.float32)
    heat[0, 1, 2, 0] = 4.0               # keypoint 0 at cell (y 1, x 2), found
    off[0, 1, 2, 0], off[0, 1, 2, 17] = 3.0, -2.0
    kps = metrics.posenet_keypoints([None, None, heat, off])
    check("PoseNet: arg max cell x 16 + offset (y, x), sigmoid score",
          abs(kps[0][1] - 19.0) < 1e-6 and abs(kps[0][2] - 30.0) < 1e-6
          and abs(kps[0][0] - 1 / (1 + np.exp(-4.0))) < 1e-9 and kps[1][0] < 0.5)
    moved = off.copy()
    moved[0, 1, 2, 0] += 9.0             # 9 px away: outside 8 px
    r = metrics.pose([[None, None, heat, off]], [[None, None, heat, moved]])
    check("PCK@8px counts FP32's found keypoints only (1 found, 9 px off: 0)",
          r["pck"] == 0.0 and r["keypoints_fp32"] == 1 and abs(r["kp_err_px"] - 9.0) < 1e-6)
    mesh = np.zeros((468, 3), np.float32)
    mesh[263, 0] = 10.0                  # outer eye corners 10 px apart
    got = mesh.copy()
    got[:, 1] += 0.5                     # every landmark 0.5 px off
    face, noface = np.array([[0.9]]), np.array([[0.1]])
    r = metrics.landmarks([[None, face, mesh.ravel()[None]], [None, noface, mesh.ravel()[None]]],
                          [[None, face, got.ravel()[None]], [None, face, got.ravel()[None]]])
    check("FaceMesh: NME 5% on the face FP32 finds; the flag agrees on 1 of 2",
          abs(r["nme"] - 0.05) < 1e-6 and r["faces_fp32"] == 1 and r["flag_agree"] == 0.5)
    e = metrics.embedding([np.array([1.0, 0.0]), np.array([0.0, 2.0])],
                          [np.array([1.0, 1.0]), np.array([0.0, 5.0])])
    check("embedding: worst and mean cosine of the windows",
          abs(e["cos_min"] - 2 ** -0.5) < 1e-12 and abs(e["cos_mean"] - (1 + 2 ** -0.5) / 2) < 1e-12)
    ref = [np.array([0.5, 0.2, 0.1, 0.1, 0.05, 0.04, 0.01])]
    got = [np.array([0.5, 0.1, 0.2, 0.0, 0.15, 0.04, 0.01])]
    check("top-3 overlap: 2 of FP32's 3 best classes", abs(
        metrics.classification(ref, got)["top3_overlap"] - 2 / 3) < 1e-12)


def test_convert_tfjs():
    try:
        import onnx
        from onnx import numpy_helper
    except ImportError:
        print("skip TensorFlow.js conversion: python3-onnx is not installed")
        return
    import base64 as b64
    import convert_tfjs

    def s(x):
        return {"s": b64.b64encode(x.encode()).decode()}

    def ints(*v):
        return {"list": {"i": [str(i) for i in v]}}

    rng = np.random.RandomState(0)
    w1 = rng.randn(3, 3, 2, 4).astype(np.float32)        # HWIO
    b1 = rng.randn(4).astype(np.float32)
    dw = rng.randn(3, 3, 4, 1).astype(np.float16)        # H, W, C, multiplier: stored FP16
    alpha = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    fc = rng.randn(4, 3).astype(np.float32)
    fcb = rng.randn(3).astype(np.float32)
    red = np.array([1, 2], np.int32)
    weights = [("w1", w1, None), ("b1", b1, None), ("dw", dw, "float16"), ("alpha", alpha, None),
               ("red", red, None), ("fc", fc, None), ("fcb", fcb, None)]
    conv_attr = {"padding": s("SAME"), "strides": ints(1, 2, 2, 1), "data_format": s("NHWC"),
                 "dilations": ints(1, 1, 1, 1),
                 "fused_ops": {"list": {"s": [s("BiasAdd")["s"], s("Relu6")["s"]]}}}
    nodes = [
        {"name": "x", "op": "Placeholder",
         "attr": {"shape": {"shape": {"dim": [{"size": "-1"}, {"size": "5"}, {"size": "5"},
                                              {"size": "2"}]}}}},
        {"name": "c1", "op": "_FusedConv2D", "input": ["x", "w1", "b1"], "attr": conv_attr},
        {"name": "d1", "op": "DepthwiseConv2dNative", "input": ["c1", "dw"],
         "attr": {"padding": s("SAME"), "strides": ints(1, 1, 1, 1), "data_format": s("NHWC")}},
        {"name": "p1", "op": "Prelu", "input": ["d1", "alpha"]},
        {"name": "m1", "op": "Mean", "input": ["p1", "red"], "attr": {"keep_dims": {"b": False}}},
        {"name": "f1", "op": "_FusedMatMul", "input": ["m1", "fc", "fcb"],
         "attr": {"fused_ops": {"list": {"s": [s("BiasAdd")["s"]]}}}},
        {"name": "y", "op": "Softmax", "input": ["f1"]},
    ]
    for name, _, _ in weights:
        nodes.append({"name": name, "op": "Const"})
    data = b"".join(a.tobytes() for _, a, _ in weights)
    spec = []
    for name, a, q in weights:
        e = {"name": name, "shape": list(a.shape),
             "dtype": "int32" if a.dtype == np.int32 else "float32"}
        if q:
            e["quantization"] = {"dtype": q}
        spec.append(e)
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "m.bin"), "wb") as f:
            f.write(data)
        with open(os.path.join(d, "m.json"), "w") as f:
            json.dump({"format": "graph-model", "modelTopology": {"node": nodes},
                       "weightsManifest": [{"paths": ["m.bin"], "weights": spec}]}, f)
        m = convert_tfjs.convert(os.path.join(d, "m.json"), os.path.join(d, "m.onnx"))
        init = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
        conv = [n for n in m.graph.node if n.op_type == "Conv"]
        att = [{a.name: onnx.helper.get_attribute_value(a) for a in n.attribute} for n in conv]
        ws = [init[n.input[1]] for n in conv]
        ins = [(i.name, [x.dim_value for x in i.type.tensor_type.shape.dim]) for i in m.graph.input]
        outs = [(o.name, [x.dim_value for x in o.type.tensor_type.shape.dim]) for o in m.graph.output]
        prelu = [init[n.input[1]] for n in m.graph.node if n.op_type == "PRelu"]
        check("TF.js conversion: NHWC input kept (batch 1), softmax output [1, 3]",
              ins == [("x", [1, 5, 5, 2])] and outs == [("y", [1, 3])])
        check("TF.js conversion: HWIO -> OIHW weights, SAME at stride 2 on 5 -> pads 1, 1",
              np.array_equal(ws[0], w1.transpose(3, 2, 0, 1)) and att[0]["pads"] == [1, 1, 1, 1]
              and att[0]["strides"] == [2, 2] and att[0]["group"] == 1)
        check("TF.js conversion: depthwise as group 4, FP16 weights widened exactly",
              att[1]["group"] == 4 and ws[1].shape == (4, 1, 3, 3) and ws[1].dtype == np.float32
              and np.array_equal(ws[1], dw.astype(np.float32).transpose(2, 3, 0, 1)
                                 .reshape(4, 1, 3, 3)))
        check("TF.js conversion: PReLU slope per channel [C, 1, 1], Mean over H, W",
              len(prelu) == 1 and prelu[0].shape == (4, 1, 1)
              and any(n.op_type == "ReduceMean" for n in m.graph.node))
        bad = dict(nodes[2])
        nodes[2] = {**bad, "op": "Atan2"}
        with open(os.path.join(d, "m.json"), "w") as f:
            json.dump({"format": "graph-model", "modelTopology": {"node": nodes},
                       "weightsManifest": [{"paths": ["m.bin"], "weights": spec}]}, f)
        try:
            convert_tfjs.convert(os.path.join(d, "m.json"), os.path.join(d, "bad.onnx"))
            said = ""
        except convert_tfjs.Unsupported as e:
            said = str(e)
        check("TF.js conversion: an op it does not handle stops it, named",
              "Atan2" in said and not os.path.exists(os.path.join(d, "bad.onnx")))


def test_second_set():
    pts = np.zeros((21, 3), np.float32)
    pts[9, 1] = 40.0                     # wrist to middle MCP 40 px
    got = pts.copy()
    got[:, 0] += 2.0                     # every point 2 px off: NME 5%
    world = np.zeros((1, 63), np.float32)
    yes, no = np.array([[0.9]]), np.array([[0.2]])
    left, right = np.array([[0.3]]), np.array([[0.7]])
    r = metrics.hand([[pts.reshape(1, 63), yes, left, world], [pts.reshape(1, 63), no, left, world]],
                     [[got.reshape(1, 63), yes, right, world], [got.reshape(1, 63), yes, left, world]])
    check("hand: NME over the palm on the flagged crop, flag 1 of 2, handedness 0 of 1",
          abs(r["nme"] - 0.05) < 1e-6 and r["hands_fp32"] == 1 and r["flag_agree"] == 0.5
          and r["handed_agree"] == 0.0)
    eye = np.zeros((76, 3), np.float32)
    eye[8, 0] = 20.0                     # eye corners (contour 0 and 8) 20 px apart
    moved = eye.copy()
    moved[71, 1] = 3.0                   # the iris centre 3 px off, the rest exact
    r = metrics.iris([[eye.reshape(1, 1, 1, 228)]], [[moved.reshape(1, 1, 1, 228)]])
    check("iris: NME over the eye width, iris centre error",
          abs(r["nme"] - 3 / 76 / 20) < 1e-9 and abs(r["iris_err_px"] - 3) < 1e-9)
    p = np.zeros(100)
    p[30], p[29], p[31] = 0.5, 0.2, 0.1
    check("Human's age: 10 a - 100 p[a-1] (larger left neighbour), over 10",
          metrics.human_age(p) == 28.0)
    p[31] = 0.3
    check("Human's age: 10 a + 100 p[a+1] (larger right neighbour), over 10",
          metrics.human_age(p) == 33.0)
    s = metrics.score([np.array([[0.6]]), np.array([[0.1]])], [np.array([[0.45]]), np.array([[0.1]])])
    check("score: largest difference, decision at 0.5 agrees on 1 of 2",
          abs(s["score_diff_max"] - 0.15) < 1e-9 and s["decision_agree"] == 0.5
          and s["positives_fp32"] == 1)


def test_third_set():
    kp = np.zeros((17, 3), np.float32)
    kp[:, 2] = 0.1
    kp[:4, 2] = 0.8                      # 4 keypoints found
    got = kp.copy()
    got[0, 0] += 3 / 192                 # 3 px: within 4
    got[1, 1] += 5 / 192                 # 5 px: not
    got[2, 2] = 0.2                      # lost (its place exact)
    got[5, 2] = 0.5                      # a keypoint FP32 does not find
    r = metrics.movenet([[kp.reshape(1, 1, 17, 3)]], [[got.reshape(1, 1, 17, 3)]])
    check("movenet: PCK@4px 3 of 4, found/not found 15 of 17, score diff 0.6",
          abs(r["pck"] - 0.75) < 1e-9 and r["keypoints_fp32"] == 4 and
          abs(r["kp_found_agree"] - 15 / 17) < 1e-9 and abs(r["kp_score_diff_max"] - 0.6) < 1e-6
          and abs(r["kp_err_max_px"] - 5) < 1e-4)
    det = np.zeros((100, 6), np.float32)
    det[:, :4] = (0, 0, 10, 10)
    det[:, 4] = 0.01
    det[0] = (0, 0, 100, 100, 0.9, 0)    # a person
    det[1] = (5, 5, 100, 100, 0.8, 0)    # the same again: NMS drops it (IoU 0.90)
    det[2] = (200, 200, 300, 300, 0.5, 15)   # a cat
    det[3] = (300, 300, 400, 400, 0.15, 41)  # under 0.2: dropped
    o = metrics.centernet_objects(det)
    check("centernet: NMS over 0.4 and scores > 0.2, Human's defaults",
          [c for c, _, _ in o] == [0, 15])
    moved = det.copy()
    moved[2, 5] = 16                     # the cat read as a dog
    moved[3, 4] = 0.25                   # a new object over the threshold
    r = metrics.objects([[det[None]]], [[moved[None]]])
    check("objects: box F1 with classes 2/5, any class 4/5",
          abs(r["box_f1"] - 0.4) < 1e-9 and abs(r["box_f1_anyclass"] - 0.8) < 1e-9 and
          r["objects_fp32"] == 2 and r["objects_q"] == 3)


def main():
    for t in (test_sqnr_cosine, test_components, test_f1_and_boxes, test_ctc_cer,
              test_edge_spaces, test_kit_text,
              test_rendered_text, test_classification_segmentation, test_faces_lines,
              test_reassemble, test_unpack, test_convert_fp16,
              test_pose_landmarks_embedding, test_convert_tfjs, test_second_set,
              test_third_set):
        t()
    bad = sum(not ok for _, ok in checks)
    print(f"{len(checks) - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
