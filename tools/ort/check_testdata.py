#!/usr/bin/python3
"""Check run_ort.js (its .pb reader, .npy writer, input binding) against the
ONNX backend test data: runs every test's model on its .pb inputs with ONNX
Runtime and compares the outputs with the expected .pb outputs.

  check_testdata.py [--root /usr/share/libonnx-testdata/data] [--filter SUBSTR]
                    [--rtol 1e-3] [--atol 1e-7] [-v]

A mismatch here means a bug in our tooling (or in ONNX Runtime); tests ORT
cannot load or run are counted separately (training ops, strings, ...).
Exit 0 when nothing mismatches.
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import q8cmp  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--filter", default="")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-7)
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    ort = q8cmp.ort_command()
    counts = {"pass": 0, "mismatch": 0, "ort-error": 0, "no-data": 0}
    mismatches = []
    tests = sorted(glob.glob(os.path.join(a.root, "*", "*", "model.onnx")))
    tests = [t for t in tests if a.filter in t]
    with tempfile.TemporaryDirectory(prefix="q8ortcheck.") as tmp:
        for model in tests:
            tdir = os.path.dirname(model)
            name = os.path.relpath(tdir, a.root)
            rtol, atol = a.rtol, a.atol
            dj = os.path.join(tdir, "data.json")
            if os.path.exists(dj):
                with open(dj) as f:
                    d = json.load(f)
                rtol, atol = max(rtol, d.get("rtol", rtol)), max(atol, d.get("atol", atol))
            sets = sorted(glob.glob(os.path.join(tdir, "test_data_set_*")))
            if not sets:
                counts["no-data"] += 1
                continue
            try:
                outs = q8cmp.model_output_names(model)
            except Exception as e:  # noqa: BLE001
                counts["ort-error"] += 1
                if a.verbose:
                    print(f"ORT-ERROR {name}: onnx.load: {e}")
                continue
            status = "pass"
            why = ""
            for s in sets:
                ins = sorted(glob.glob(os.path.join(s, "input_*.pb")),
                             key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
                od = os.path.join(tmp, "out")
                for f in glob.glob(os.path.join(od, "*")):
                    os.remove(f)
                cmd = ort + [model, "--out", od, "--threads", "1"]
                for i in ins:
                    cmd += ["--input", i]
                if not ins:
                    status, why = "ort-error", "no inputs"
                    break
                p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                if p.returncode != 0:
                    status, why = "ort-error", p.stderr.strip().splitlines()[0][:200]
                    break
                for k, on in enumerate(outs):
                    ep = os.path.join(s, f"output_{k}.pb")
                    if not os.path.exists(ep):
                        continue
                    exp = q8cmp.load_tensor(ep)
                    got = np.load(os.path.join(od, q8cmp.sanitize(on) + ".npy"))
                    if exp.dtype == object or got.shape != exp.shape or got.dtype != exp.dtype:
                        status = "mismatch"
                        why = f"output {on}: {got.dtype}{got.shape} vs expected {exp.dtype}{exp.shape}"
                    elif np.issubdtype(exp.dtype, np.floating):
                        if not np.allclose(got, exp, rtol=rtol, atol=atol, equal_nan=True):
                            err = np.max(np.abs(got.astype(np.float64) - exp))
                            status, why = "mismatch", f"output {on}: max abs err {err:.3g}"
                    elif not np.array_equal(got, exp):
                        status, why = "mismatch", f"output {on}: values differ"
                    if status != "pass":
                        break
                if status != "pass":
                    break
            counts[status] += 1
            if status == "mismatch":
                mismatches.append(f"{name}: {why}")
            if a.verbose or status == "mismatch":
                print(f"{status.upper()} {name}{': ' + why if why else ''}", flush=True)
    print(f"{len(tests)} tests: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    return 1 if counts["mismatch"] else 0


if __name__ == "__main__":
    sys.exit(main())
