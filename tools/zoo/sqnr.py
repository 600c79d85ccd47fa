#!/usr/bin/python3
"""Output SQNR of the zoo's INT8 models against FP32, per calibration setting:
how docs/accuracy.md checks that a change of quantize's defaults makes no
zoo model worse.

    /usr/bin/python3 tools/zoo/sqnr.py ZOO_DIR [--build DIR]
        [--variants NAME=ARGS,...]

ZOO_DIR is made by make_zoo.py (tools/regress/same_outputs.py keeps one in
~/.cache/q8/regress/zoo). Each model is calibrated on its own sample input
(M.inputs), as same_outputs.py does, and run on it; the SQNR is that of its
worst output (10 log10 of signal over error energy, against q8's FP32 run).
Default variants: percentile (--calib-method percentile) and default (no
option).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(q8run, model, ind, out):
    cmd = [q8run, model, "--out", out]
    for f in sorted(os.listdir(ind)):
        if f.endswith(".npy"):
            cmd += ["--input", f"{f[:-4]}={os.path.join(ind, f)}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr else "q8run failed")
    return {f: np.load(os.path.join(out, f)) for f in sorted(os.listdir(out))}


def sqnr(ref, got):
    worst = float("inf")
    for k, r in ref.items():
        if r.dtype.kind != "f":
            continue
        r = r.astype(np.float64)
        e = got[k].astype(np.float64) - r
        s, n = float((r * r).sum()), float((e * e).sum())
        worst = min(worst, float("inf") if n == 0 else 10 * np.log10(s / n) if s > 0 else -np.inf)
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("zoo")
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    ap.add_argument("--variants", default="percentile=--calib-method percentile,default=")
    a = ap.parse_args()
    variants = [(v.split("=", 1)[0], v.split("=", 1)[1].split()) for v in a.variants.split(",")]
    quantize, q8run = (os.path.join(a.build, t) for t in ("quantize", "q8run"))
    print("| model | " + " | ".join(f"{n} SQNR dB" for n, _ in variants) + " |")
    print("|---|" + "---:|" * len(variants))
    with tempfile.TemporaryDirectory() as tmp:
        for f in sorted(os.listdir(a.zoo)):
            if not f.endswith(".onnx"):
                continue
            name, onnx = f[:-5], os.path.join(a.zoo, f)
            ind = os.path.join(a.zoo, name + ".inputs")
            cells = []
            try:
                ref = run(q8run, onnx, ind, tempfile.mkdtemp(dir=tmp))
            except RuntimeError as e:
                print(f"| {name} | FP32 fails: {e} |")
                continue
            for vname, extra in variants:
                q8 = os.path.join(tmp, f"{name}.{vname}.q8")
                r = subprocess.run([quantize, onnx, "-o", q8, "--calib", ind] + extra,
                                   capture_output=True, text=True)
                if r.returncode:
                    cells.append("quantize fails")
                    continue
                try:
                    cells.append(f"{sqnr(ref, run(q8run, q8, ind, tempfile.mkdtemp(dir=tmp))):.1f}")
                except RuntimeError as e:
                    cells.append(f"fails: {e}")
            print(f"| {name} | " + " | ".join(cells) + " |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
