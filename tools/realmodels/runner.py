"""Running q8's tools on the kit: q8run on every sample of a split, quantize
with its time and peak RSS."""

import glob
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "ort"))
import q8cmp  # noqa: E402

GNU_TIME = "/usr/bin/time"


def samples(folder):
    files = sorted(glob.glob(os.path.join(folder, "*.npy")))
    if not files:
        raise SystemExit(f"realmodels: no samples in {folder}: run make_inputs.py")
    return files


def run_each(cmd, what, m, files, out_root):
    """cmd + [--input NAME=FILE, --out DIR] on each sample; returns one list
    of output arrays per sample (in the ONNX model's output order)."""
    names = q8cmp.model_output_names(m.onnx())
    results = []
    for f in files:
        out = os.path.join(out_root, os.path.splitext(os.path.basename(f))[0])
        shutil.rmtree(out, ignore_errors=True)
        p = subprocess.run(cmd + ["--input", f"{m.input_name}={f}", "--out", out],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"{what} {f}: {p.stderr.strip()}")
        results.append([np.load(os.path.join(out, q8cmp.sanitize(n) + ".npy")) for n in names])
        shutil.rmtree(out, ignore_errors=True)
    return results


def run_q8(q8run, model_path, m, files, out_root):
    """q8run MODEL on each sample (run_each)."""
    return run_each([q8run, model_path], f"q8run {model_path}", m, files, out_root)


def quantize(tool, m, out, extra):
    """Runs quantize; returns (seconds, peak RSS bytes or None, stdout line).
    The peak RSS is GNU time's %M of the quantize process itself (started from
    a small shell, see tools/ort/q8cmp.py SMALL_PARENT): None without
    /usr/bin/time."""
    cmd = [tool, m.onnx(), "-o", out, "--calib", m.inputs("calib"),
           "--input-shape", m.shape_arg()] + list(extra)
    rss_file = out + ".rss"
    wrap = [GNU_TIME, "-f", "%M", "-o", rss_file] if os.access(GNU_TIME, os.X_OK) else []
    t0 = time.monotonic()
    p = subprocess.run(q8cmp.SMALL_PARENT + wrap + cmd, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    secs = time.monotonic() - t0
    # 3: --min-sqnr / --max-drop missed their target but wrote the best model
    if p.returncode not in (0, 3):
        raise RuntimeError(f"quantize {m.name} {' '.join(extra)}: "
                           f"{(p.stderr.strip() or p.stdout.strip()).splitlines()[0]}")
    rss = None
    if wrap:
        with open(rss_file) as f:
            txt = f.read()
        os.remove(rss_file)
        nums = re.findall(r"^\d+$", txt, re.M)
        rss = int(nums[-1]) * 1024 if nums else None
    return secs, rss, p.stdout.strip()


def run_ort(model_path, m, files, out_root):
    """ONNX Runtime (tools/ort/run_ort.js, its default graph optimizations:
    a QDQ model's DQ -> op -> Q fused into ORT's QLinear kernels) on each
    sample (run_each)."""
    return run_each(q8cmp.ort_command() + [model_path], f"ORT {model_path}", m, files, out_root)


def ort_qdq(m, out):
    """ORT's own INT8 of the kit model (tools/bench/ort_qdq.py, calibrated on
    the kit's calib split); returns (seconds, peak RSS bytes or None, its line)
    as quantize does. The peak RSS is the Python process's alone (ORT's
    calibration runs in node processes it starts): None."""
    tool = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench",
                        "ort_qdq.py")
    t0 = time.monotonic()
    p = subprocess.run(["/usr/bin/python3", tool, m.onnx(), "-o", out, "--calib",
                        m.inputs("calib")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    secs = time.monotonic() - t0
    if p.returncode != 0:
        raise RuntimeError(f"ort_qdq {m.name}: "
                           f"{((p.stderr.strip() or p.stdout.strip()).splitlines() or ['?'])[-1]}")
    return secs, None, p.stdout.strip()
