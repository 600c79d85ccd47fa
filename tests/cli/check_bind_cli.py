#!/usr/bin/python3
"""Inputs bound to a value, end to end through the tools, on a small model
shaped like Silero VAD v5: an `If` on `sr == 16000` whose 8 kHz side cannot
take the 16 kHz chunk (a Reshape to 3 rows of 16 values), so the model
builds only with `sr` bound (issue 11, item 3). Checks, each of which failed
before (the survey of 2026-12-02):

- `quantize --bind sr=FILE` with a --calib folder that has no `sr/`;
- `quantize --bind ... --min-sqnr 60` (the FP32-fallback search reloads the
  model: it must bind too, and name layers inside the branch);
- `sr` constant in the calibration samples (bound by quantize itself) with
  the search;
- `q8report` with `--bind`, and without it (the .q8's bound values);
- q8run on each .q8 with `sr` given as an input (the bound value) or not;
- q8run on the ONNX model with `sr` an input: 16000 runs the 16 kHz side,
  8000 stops with the reason its side was dropped at load;
- the messages (2026-12-02, fifteenth session): a sample folder holding only
  the bound input's subfolder names the one missing (it was read as a flat
  folder), a single --data file when every input is bound says so (it said
  "the model has 0 inputs"), and --fp32-layers naming a node of the branch
  that the binding removed says a bound input may have removed it.

    check_bind_cli.py BUILD_DIR
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(path):
    rng = np.random.default_rng(7)
    w1 = numpy_helper.from_array(rng.standard_normal((16, 32)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.standard_normal((32, 4)).astype(np.float32) * 0.2, "w2")
    then = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"], name="branch16/fc1"),
         helper.make_node("Relu", ["h"], ["hr"], name="branch16/relu"),
         helper.make_node("MatMul", ["hr", "w2"], ["y16"], name="branch16/fc2")],
        "then16", [], [helper.make_tensor_value_info("y16", TensorProto.FLOAT, [1, 4])])
    rows = numpy_helper.from_array(np.array([3, -1], np.int64), "rows")
    other = helper.make_graph(
        [helper.make_node("Reshape", ["x", "rows"], ["r8"], name="branch8/reshape"),
         helper.make_node("ReduceSum", ["r8"], ["y8"], keepdims=1, name="branch8/sum")],
        "else8", [], [helper.make_tensor_value_info("y8", TensorProto.FLOAT, [1, 4])],
        [rows])
    k16 = numpy_helper.from_array(np.array(16000, np.int64), "k16")
    g = helper.make_graph(
        [helper.make_node("Equal", ["sr", "k16"], ["is16"]),
         helper.make_node("If", ["is16"], ["y"], then_branch=then, else_branch=other,
                          name="by_rate")],
        "bind_check",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16]),
         helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [w1, w2, k16])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, path)


def onnx_init(path, name):
    return next(numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer
                if t.name == name)


def main():
    build = sys.argv[1]
    tool = lambda name: os.path.join(build, name)
    fails = []
    with tempfile.TemporaryDirectory() as d:
        onnx_path = os.path.join(d, "vad.onnx")
        model(onnx_path)
        rng = np.random.default_rng(1)
        sr = os.path.join(d, "sr.npy")
        np.save(sr, np.array(16000, np.int64))
        only_x, with_sr = os.path.join(d, "only_x"), os.path.join(d, "with_sr")
        for sub in (only_x + "/x", with_sr + "/x", with_sr + "/sr"):
            os.makedirs(sub)
        for i in range(8):
            x = rng.standard_normal((1, 16)).astype(np.float32)
            np.save(f"{only_x}/x/{i:03d}.npy", x)
            np.save(f"{with_sr}/x/{i:03d}.npy", x)
            np.save(f"{with_sr}/sr/{i:03d}.npy", np.array(16000, np.int64))
        x0 = f"{only_x}/x/000.npy"

        def run(what, cmd):
            p = subprocess.run(cmd, capture_output=True, timeout=600)
            if p.returncode != 0:
                fails.append(f"{what}: exit {p.returncode}: "
                             f"{(p.stderr or p.stdout).decode().strip()[-400:]}")
            return p

        cases = {
            "bind, no sr/ samples": (["--bind", f"sr={sr}", "--calib", only_x], "b.q8"),
            "bind, search": (["--bind", f"sr={sr}", "--calib", only_x, "--min-sqnr", "60"],
                             "bs.q8"),
            "sr constant in the samples, search": (["--calib", with_sr, "--min-sqnr", "60"],
                                                   "cs.q8"),
        }
        for what, (args, name) in cases.items():
            out = os.path.join(d, name)
            p = run(f"quantize ({what})", [tool("quantize"), onnx_path, "-o", out] + args)
            # at 60 dB the search keeps a layer of the 16 kHz branch FP32
            if "search" in what and "FP32 for branch16/" not in p.stdout.decode():
                fails.append(f"quantize ({what}): no trial kept a branch layer FP32: "
                             f"{p.stdout.decode().strip()[-300:]}")
            if not os.path.exists(out):
                fails.append(f"quantize ({what}) wrote no .q8")
                continue
            run(f"q8run {name}, sr given", [tool("q8run"), out, "--input", f"x={x0}",
                                            "--input", f"sr={sr}"])
            run(f"q8run {name}, sr left out", [tool("q8run"), out, "--input", f"x={x0}"])
            html = os.path.join(d, name + ".html")
            run(f"q8report {name}, --bind", [tool("q8report"), onnx_path, out, "--data",
                                             only_x, "--bind", f"sr={sr}", "-o", html])
            run(f"q8report {name}, the .q8's value", [tool("q8report"), onnx_path, out,
                                                       "--data", with_sr, "-o", html])
        # samples of a bound input that the user gave are checked against
        # the .q8's value, not ignored
        wrong = os.path.join(d, "wrong_sr")
        os.makedirs(wrong + "/x")
        os.makedirs(wrong + "/sr")
        for i in range(2):
            np.save(f"{wrong}/x/{i:03d}.npy", rng.standard_normal((1, 16)).astype(np.float32))
            np.save(f"{wrong}/sr/{i:03d}.npy", np.array(8000, np.int64))
        p = subprocess.run([tool("q8report"), onnx_path, os.path.join(d, "b.q8"), "--data",
                            wrong, "-o", os.path.join(d, "w.html")], capture_output=True)
        if p.returncode == 0 or "bound to 16000" not in p.stderr.decode():
            fails.append(f"q8report with sr = 8000 samples for a .q8 bound to 16000: exit "
                         f"{p.returncode}, {p.stderr.decode().strip()[-300:]}")
        # calibration samples that pick the side that cannot run: one clear
        # error, no file
        mixed = os.path.join(d, "mixed_sr")
        os.makedirs(mixed + "/x")
        os.makedirs(mixed + "/sr")
        for i in range(4):
            np.save(f"{mixed}/x/{i:03d}.npy", rng.standard_normal((1, 16)).astype(np.float32))
            np.save(f"{mixed}/sr/{i:03d}.npy", np.array(16000 if i % 2 else 8000, np.int64))
        out = os.path.join(d, "n.q8")
        p = subprocess.run([tool("quantize"), onnx_path, "-o", out, "--calib", mixed],
                           capture_output=True)
        if (p.returncode == 0 or os.path.exists(out) or
                "cannot run at this model's shapes" not in p.stderr.decode()):
            fails.append(f"quantize on samples that take the unrunnable side: exit "
                         f"{p.returncode}, {p.stderr.decode().strip()[-300:]}")
        # the messages: one line, naming what is wrong
        only_sr = os.path.join(d, "only_sr")
        os.makedirs(only_sr + "/sr")
        np.save(f"{only_sr}/sr/000.npy", np.array(16000, np.int64))
        msgs = {
            "quantize, a folder with only sr/": (
                [tool("quantize"), onnx_path, "-o", os.path.join(d, "m.q8"), "--bind",
                 f"sr={sr}", "--calib", only_sr], "'x/' (the input that takes samples"),
            "q8report, a folder with only sr/": (
                [tool("q8report"), onnx_path, os.path.join(d, "b.q8"), "--bind", f"sr={sr}",
                 "--data", only_sr, "-o", os.path.join(d, "m.html")],
                "'x/' (the input that takes samples"),
            "q8report, one file with every input bound": (
                [tool("q8report"), onnx_path, os.path.join(d, "b.q8"), "--bind", f"sr={sr}",
                 "--bind", f"x={x0}", "--data", x0, "-o", os.path.join(d, "m.html")],
                "every input of the model is bound"),
            "quantize --fp32-layers naming the removed branch's node": (
                [tool("quantize"), onnx_path, "-o", os.path.join(d, "m.q8"), "--bind",
                 f"sr={sr}", "--calib", only_x, "--fp32-layers", "branch8/sum"],
                "the branch of an If that the bound input removed"),
        }
        for what, (cmd, want) in msgs.items():
            p = subprocess.run(cmd, capture_output=True, timeout=600)
            err = p.stderr.decode().strip()
            if p.returncode == 0 or want not in err or len(err.splitlines()) != 1:
                fails.append(f"{what}: exit {p.returncode}, {err[-300:]} (wanted '{want}')")
        if os.path.exists(os.path.join(d, "m.q8")):
            fails.append("a quantize that failed left m.q8")
        # x's files at the top with an sr/ beside them: still read flat
        mixed_flat = os.path.join(d, "mixed_flat")
        os.makedirs(mixed_flat + "/sr")
        for i in range(3):
            np.save(f"{mixed_flat}/{i:03d}.npy", rng.standard_normal((1, 16)).astype(np.float32))
            np.save(f"{mixed_flat}/sr/{i:03d}.npy", np.array(16000, np.int64))
        run("quantize --bind, x flat beside sr/",
            [tool("quantize"), onnx_path, "-o", os.path.join(d, "mf.q8"), "--bind", f"sr={sr}",
             "--calib", mixed_flat])
        # x/ beside a stray top-level file of another shape: x/ is read, as it
        # always was (the rule above must not make it flat; review)
        stray = os.path.join(d, "stray")
        os.makedirs(stray + "/x")
        for i in range(3):
            np.save(f"{stray}/x/{i:03d}.npy", rng.standard_normal((1, 16)).astype(np.float32))
        np.save(f"{stray}/notes.npy", np.zeros((7,), np.float32))
        run("quantize --bind, x/ beside a stray file",
            [tool("quantize"), onnx_path, "-o", os.path.join(d, "st.q8"), "--bind", f"sr={sr}",
             "--calib", stray])
        # unbound, the model loads with its 8 kHz side dropped: 16000 runs
        # it (the then side's value), 8000 stops with the reason
        y = os.path.join(d, "y16")
        run("q8run, sr = 16000 as an input", [tool("q8run"), onnx_path, "--input", f"x={x0}",
                                              "--input", f"sr={sr}", "-o", y])
        if not os.path.exists(f"{y}/y.npy"):
            fails.append("q8run, sr = 16000: no y.npy written")
        else:
            x = np.load(x0)
            want = np.maximum(x @ onnx_init(onnx_path, "w1"), 0) @ onnx_init(onnx_path, "w2")
            got = np.load(f"{y}/y.npy")
            if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
                fails.append(f"q8run, sr = 16000: {got} against {want}")
        sr8 = os.path.join(d, "sr8.npy")
        np.save(sr8, np.array(8000, np.int64))
        p = subprocess.run([tool("q8run"), onnx_path, "--input", f"x={x0}", "--input",
                            f"sr={sr8}"], capture_output=True)
        msg = p.stderr.decode()
        if p.returncode == 0 or "cannot run at this model's shapes" not in msg:
            fails.append(f"q8run, sr = 8000: exit {p.returncode}, {msg.strip()}")
    for f in fails:
        print("FAIL:", f)
    if fails:
        sys.exit(1)
    print("bind: every case ran")


if __name__ == "__main__":
    main()
