#!/usr/bin/python3
"""Run the zoo made by make_zoo.py through ONNX Runtime (and q8run) and compare.

  check_zoo.py ZOODIR [--only NAME,...] [--q8] [--q8run PATH] [--rtol 1e-4]
               [--threads N]

Always: ONNX Runtime's outputs vs PyTorch's (ZOODIR/NAME.expected/), a sanity
check of the zoo and of tools/ort. With --q8: also q8run vs ONNX Runtime on
the same inputs (what tools/ort/compare.py does, for every model). One line
per output; exit 1 if any comparison fails, 0 otherwise (models q8run cannot
run yet are listed as q8-error and make the exit code 1 too).
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ort"))
import q8cmp  # noqa: E402


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, (p.stderr.strip() or p.stdout.strip()).splitlines()[:1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("zoo")
    ap.add_argument("--only")
    ap.add_argument("--q8", action="store_true", help="also compare q8run with ONNX Runtime")
    ap.add_argument("--q8run")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--threads", type=int, default=None)
    a = ap.parse_args()
    with open(os.path.join(a.zoo, "manifest.json")) as f:
        manifest = json.load(f)
    names = a.only.split(",") if a.only else list(manifest)
    ort = q8cmp.ort_command()
    q8run = q8cmp.find_q8run(a.q8run) if a.q8 else None
    thr = ["--threads", str(a.threads)] if a.threads else []
    counts = {"ok": 0, "fail": 0, "ort-error": 0, "q8-error": 0}
    with tempfile.TemporaryDirectory(prefix="q8zoo.") as tmp:
        for name in names:
            model = os.path.join(a.zoo, name + ".onnx")
            ins = []
            for p in sorted(glob.glob(os.path.join(a.zoo, name + ".inputs", "*.npy"))):
                ins += ["--input", f"{os.path.basename(p)[:-4]}={p}"]
            od, qd = os.path.join(tmp, name, "ort"), os.path.join(tmp, name, "q8")
            rc, err = run(ort + [model] + ins + ["--out", od] + thr)
            if rc:
                counts["ort-error"] += 1
                print(f"ORT-ERROR {name}: {' '.join(err)}", flush=True)
                continue
            outs = [o["name"] for o in manifest[name]["outputs"]]
            edir = os.path.join(a.zoo, name + ".expected")
            pairs = []
            for o in outs:
                e = os.path.join(edir, q8cmp.sanitize(o) + ".npy")
                if os.path.exists(e):
                    pairs.append(("ort~torch", o, od, e))
            if q8run:
                rc, err = run([q8run, model] + ins + ["--out", qd] + thr)
                if rc:
                    counts["q8-error"] += 1
                    print(f"Q8-ERROR {name}: {' '.join(err)}", flush=True)
                else:
                    for o in outs:
                        pairs.append(("q8~ort", o, qd, os.path.join(od, q8cmp.sanitize(o) + ".npy")))
            if not pairs:
                print(f"{name:30s} ort       ran; nothing to compare with (no expected outputs)")
            for label, o, gdir, ref in pairs:
                got = q8cmp.load_tensor(os.path.join(gdir, q8cmp.sanitize(o) + ".npy"))
                r = q8cmp.compare(o, got, q8cmp.load_tensor(ref), a.rtol,
                                  argmax_axis=1 if got.ndim == 4 else -1)
                counts["ok" if r.ok else "fail"] += 1
                print(f"{name:30s} {label:9s} {r.line()}", flush=True)
    print(", ".join(f"{v} {k}" for k, v in counts.items()))
    return 0 if counts["fail"] + counts["ort-error"] + counts["q8-error"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
