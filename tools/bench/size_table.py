#!/usr/bin/python3
"""How big each INT8 .q8 is against its ONNX file, and what q8run holds.

  size_table.py --build DIR --out DIR [--only a,b] [--skip-run]

Quantizes (once: an existing OUT/NAME.q8 is reused) every shipped model
(models/mnist), every zoo model (Q8_CACHE/zoo, made by tools/zoo/make_zoo.py)
and every kit model found in Q8_CACHE/models (tools/realmodels; the kit's
calibration samples and input shape) with DIR's `quantize` and its defaults,
then runs `q8run NAME.q8 --json` on one input for weights_bytes. Prints a
markdown table: .q8 bytes, ONNX bytes, .q8 / ONNX, weights_bytes,
weights_bytes / .q8. The issue 13 targets: .q8 / ONNX <= 0.27,
weights / file <= 1.02.
"""
import argparse
import json
import os
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tools", "realmodels"))
import kit  # noqa: E402

CACHE = os.path.expanduser(os.environ.get("Q8_CACHE", "~/.cache/q8"))


def models():
    """[(name, onnx, calib dir, input shape or None, {input: npy})]"""
    out = []
    mn = os.path.join(TOP, "models", "mnist")
    for m in ["mlp", "cnn", "vit", "vit_opset17"]:
        out.append((f"mnist_{m}", os.path.join(mn, m + ".onnx"), os.path.join(mn, "calib"), None,
                    {"input": os.path.join(mn, "sample.npy")}))
    zoo = os.path.join(CACHE, "zoo")
    for f in sorted(os.listdir(zoo)) if os.path.isdir(zoo) else []:
        if f.endswith(".onnx"):
            ind = os.path.join(zoo, f[:-5] + ".inputs")
            ins = {i[:-4]: os.path.join(ind, i) for i in sorted(os.listdir(ind))
                   if i.endswith(".npy")}
            out.append((f[:-5], os.path.join(zoo, f), ind, None, ins))
    for m in kit.MODELS:
        if not m.loads or not os.path.exists(m.onnx()):
            continue
        first = sorted(os.listdir(m.inputs("heldout")))[0]
        out.append((m.name, m.onnx(), m.inputs("calib"), m.shape_arg(),
                    {m.input_name: os.path.join(m.inputs("heldout"), first)}))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--only")
    ap.add_argument("--skip-run", action="store_true", help="sizes only, no q8run")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    only = set(a.only.split(",")) if a.only else None
    print("| model | .q8 bytes | ONNX bytes | .q8 / ONNX | weights_bytes | weights / .q8 |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, onnx, calib, shape, ins in models():
        if only and name not in only:
            continue
        q8 = os.path.join(a.out, name + ".q8")
        if not os.path.exists(q8):
            cmd = [os.path.join(a.build, "quantize"), onnx, "-o", q8, "--calib", calib]
            if shape:
                cmd += ["--input-shape", shape]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode not in (0, 3):
                print(f"| {name} | quantize failed: {(p.stderr or p.stdout).strip()[:80]} |||||")
                continue
        qb, ob = os.path.getsize(q8), os.path.getsize(onnx)
        wb = "-"
        if not a.skip_run:
            cmd = [os.path.join(a.build, "q8run"), q8, "--json", "--bench", "1"]
            for k, v in ins.items():
                cmd += ["--input", f"{k}={v}"]
            p = subprocess.run(cmd, capture_output=True, text=True)
            try:
                wb = json.loads(p.stdout.strip().splitlines()[-1])["weights_bytes"]
            except (ValueError, IndexError, KeyError):
                wb = "q8run failed: " + (p.stderr.strip()[:60])
        ratio = f"{wb / qb:.3f}" if isinstance(wb, int) else "-"
        print(f"| {name} | {qb} | {ob} | {qb / ob:.3f} | {wb} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
