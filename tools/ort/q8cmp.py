"""Shared helpers for tools/ort/compare.py, tools/ort/check_testdata.py and
tools/bench/cpu_vs_ort.py: locating q8run and run_ort.js, output file names,
tensor loading and the output comparison.

Needs numpy; onnx only for .pb tensors and model output names.
"""

import json
import os
import re
import shutil
import subprocess

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RUN_ORT = os.path.join(HERE, "run_ort.js")


def sanitize(name):
    """Like q8run's q8_cli_sanitize: each UTF-8 byte outside [A-Za-z0-9._-]
    becomes '_', at most 255 bytes, never '', '.' or '..'."""
    out = "".join(chr(b) if re.match(rb"[A-Za-z0-9._-]", bytes([b])) else "_"
                  for b in name.encode("utf-8")[:255])
    return "_" + out if out in ("", ".", "..") else out


def find_q8run(explicit=None):
    """--q8run, then $Q8RUN, then build/q8run (or build/tools/q8run) in this
    checkout, then q8run on PATH."""
    cands = [explicit, os.environ.get("Q8RUN"),
             os.path.join(REPO, "build", "q8run"), os.path.join(REPO, "build", "tools", "q8run")]
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    if explicit:
        raise SystemExit(f"q8run not found or not executable: {explicit}")
    w = shutil.which("q8run")
    if w:
        return w
    raise SystemExit("q8run not found: build it (cmake --build build) or pass --q8run PATH")


def ort_command(node="node"):
    if not os.path.isdir(os.path.join(HERE, "node_modules", "onnxruntime-node")):
        raise SystemExit(f"onnxruntime-node is not installed: (cd {HERE} && "
                         "ONNXRUNTIME_NODE_INSTALL=skip npm ci)")
    return [node, RUN_ORT]


def load_tensor(path):
    with open(path, "rb") as f:
        head = f.read(6)
    if head == b"\x93NUMPY":
        return np.load(path, allow_pickle=False)
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def model_output_names(onnx_path):
    import onnx
    m = onnx.load(onnx_path, load_external_data=False)
    return [o.name for o in m.graph.output]


def model_input_names(onnx_path):
    """Real inputs: graph inputs that are not initializers (old exporters list
    initializers as inputs too)."""
    import onnx
    m = onnx.load(onnx_path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    return [i.name for i in m.graph.input if i.name not in inits]


# Runs "$@" in a child of a small shell rather than straight from Python. On
# Linux, getrusage's ru_maxrss (q8run's peak_rss_bytes) includes the memory the
# process had before exec: a child forked from a Python process inherits
# Python's resident pages (measured: 233 MB reported for a 2 MB q8run when
# torch was imported, 32 MB with only numpy). The shell's child is forked from
# the ~2 MB shell, so the figure is the program's own (+ at most the shell's).
# "; exit $?" keeps the shell from exec'ing the command in its own process.
SMALL_PARENT = ["/bin/sh", "-c", '"$@"; exit $?', "sh"]


def run_json(cmd, env=None):
    """Runs a --json command (from a small parent, see SMALL_PARENT); returns
    (parsed last stdout line, CompletedProcess)."""
    p = subprocess.run(SMALL_PARENT + list(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"exit {p.returncode}: {' '.join(cmd)}\n{p.stderr.strip()}")
    lines = [l for l in p.stdout.strip().splitlines() if l.strip()]
    if not lines:
        raise RuntimeError(f"no output from {' '.join(cmd)}")
    return json.loads(lines[-1]), p


class Result:
    def __init__(self, name):
        self.name = name
        self.ok = True
        self.problems = []
        self.shape = None
        self.dtype = None
        self.max_abs = float("nan")
        self.max_rel = float("nan")
        self.floor = float("nan")
        self.argmax = None  # (agree, rows, clear_disagreements)

    def fail(self, msg):
        self.ok = False
        self.problems.append(msg)

    def line(self):
        head = "OK  " if self.ok else "FAIL"
        parts = [f"{head} {self.name}"]
        if self.shape is not None:
            parts.append(f"{self.dtype}[{'x'.join(map(str, self.shape))}]")
        if not np.isnan(self.max_abs):
            parts.append(f"max_abs={self.max_abs:.3g}")
        if not np.isnan(self.max_rel):
            parts.append(f"max_rel={self.max_rel:.3g} (floor {self.floor:.3g})")
        if self.argmax:
            agree, rows, clear = self.argmax
            parts.append(f"argmax {agree}/{rows} rows agree ({100.0 * agree / rows:.2f}%"
                         f"{f', {clear} beyond ties' if clear else ''})")
        return "  ".join(parts + self.problems)


def compare(name, got, ref, rtol, floor=None, floor_frac=1.0, argmax_axis=-1, min_argmax=1.0,
            tie=None):
    """Compares `got` (q8) with `ref` (ONNX Runtime).

    Floats: rel = |got - ref| / max(|ref|, floor), where floor defaults to
    floor_frac * RMS(ref): elements near zero are judged against the tensor's
    typical magnitude, not their own (two correct FP32 implementations differ
    by rounding that scales with the summands, not with the result); fails when max rel > rtol, NaN/Inf patterns
    differ, or fewer than min_argmax of the rows have the same argmax along
    argmax_axis. A row where the two argmaxes differ only by a near-tie in ref
    counts as agreeing: ref's max minus ref's value at q8's pick is at most
    tie * max(|ref max|, floor); tie defaults to 2 * rtol (0: raw agreement).
    Integers and bools must be equal."""
    r = Result(name)
    got = np.asarray(got)
    ref = np.asarray(ref)
    r.shape, r.dtype = ref.shape, ref.dtype
    if got.shape != ref.shape:
        r.fail(f"shape {got.shape} != ORT {ref.shape}")
        return r
    if got.dtype != ref.dtype:
        r.fail(f"dtype {got.dtype} != ORT {ref.dtype}")
        return r
    if got.size == 0:
        return r
    if not np.issubdtype(ref.dtype, np.floating):
        bad = int(np.count_nonzero(got != ref))
        r.max_abs = float(np.max(np.abs(got.astype(np.float64) - ref.astype(np.float64))))
        if bad:
            r.fail(f"{bad} of {ref.size} values differ")
        return r
    g = got.astype(np.float64)
    f = ref.astype(np.float64)
    fin_g, fin_f = np.isfinite(g), np.isfinite(f)
    if not np.array_equal(fin_g, fin_f):
        r.fail(f"non-finite values differ: q8 {int((~fin_g).sum())}, ORT {int((~fin_f).sum())}")
        return r
    if not np.array_equal(g[~fin_g], f[~fin_f], equal_nan=True):
        r.fail("NaN/Inf values differ")
    both = fin_f
    if not both.any():
        return r
    diff = np.abs(g[both] - f[both])
    rms = float(np.sqrt(np.mean(np.square(f[both]))))
    r.floor = floor if floor is not None else max(floor_frac * rms, np.finfo(np.float32).tiny)
    r.max_abs = float(diff.max())
    r.max_rel = float(np.max(diff / np.maximum(np.abs(f[both]), r.floor)))
    if r.max_rel > rtol:
        r.fail(f"max_rel > rtol {rtol:g}")
    if -ref.ndim <= argmax_axis < ref.ndim and ref.shape[argmax_axis] > 1:
        ag = np.argmax(np.nan_to_num(g), axis=argmax_axis)
        af = np.argmax(np.nan_to_num(f), axis=argmax_axis)
        same = ag == af
        # ref's value at q8's pick, vs ref's max: a near-tie is not a disagreement.
        fmax = np.take_along_axis(f, np.expand_dims(af, argmax_axis), argmax_axis)
        fpick = np.take_along_axis(f, np.expand_dims(ag, argmax_axis), argmax_axis)
        tie_rel = 2 * rtol if tie is None else tie
        is_tie = np.squeeze(fmax - fpick <= tie_rel * np.maximum(np.abs(fmax), r.floor), argmax_axis)
        rows = int(same.size)
        agree = int(same.sum())
        clear = int((~same & ~is_tie).sum())
        r.argmax = (agree, rows, clear)
        if (rows - clear) < min_argmax * rows:
            r.fail(f"argmax agreement below {min_argmax:g}")
    return r
