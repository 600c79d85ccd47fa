#!/usr/bin/python3
"""Same answers on aarch64: .q8 files made by the x86 build's `quantize` run
by the x86 `q8run` and by the aarch64 `q8run` (under qemu-aarch64), outputs
compared byte for byte.

    /usr/bin/python3 tools/check/same_bytes_aarch64.py --x86 build --arm build-aarch64
        [--models cnn,mlp,vit] [--qemu-cpu max,cortex-a76]

- Models: models/mnist/{cnn,mlp,vit}.onnx (default all three) on sample.npy
  and on the first 64 held-out digits.
- INT8 (the .q8, made once on x86): every output file must be the same
  bytes, with 1 and 2 threads, under each --qemu-cpu (max: SDOT and I8MM;
  cortex-a76: SDOT only, like Orin's Cortex-A78AE; cortex-a72: neither).
- FP32 (the .onnx): the same bytes are reported; a difference fails only
  beyond 1e-4 relative + 1e-5 of the largest |value| (docs/jetson.md).
Prints one line per case and 'N passed, N failed'; exit 1 on any failure.
"""
import argparse
import filecmp
import os
import subprocess
import sys
import tempfile

import numpy as np

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MN = os.path.join(TOP, "models", "mnist")


def sh(cmd, env=None):
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def run(bld, model, x, out, threads, qemu_cpu=None):
    cmd = [os.path.join(bld, "q8run"), model, "--input", f"input={x}", "--out", out,
           "--threads", str(threads)]
    env = None
    if qemu_cpu:
        cmd = ["qemu-aarch64", "-cpu", qemu_cpu] + cmd
    r = sh(cmd, env)
    if r.returncode != 0:
        sys.exit(f"same_bytes_aarch64: {' '.join(cmd)} failed:\n{r.stderr[-2000:]}")


def fp32_close(a, b):
    x, y = np.load(a), np.load(b)
    if x.shape != y.shape or x.dtype != y.dtype:
        return False, "shape or dtype differs"
    big = float(np.max(np.abs(y))) if y.size else 0.0
    err = np.abs(x.astype(np.float64) - y.astype(np.float64))
    ok = bool(np.all(err <= 1e-4 * np.abs(y) + 1e-5 * big))
    return ok, f"max |diff| {float(err.max()) if err.size else 0.0:.3g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--x86", default=os.path.join(TOP, "build"))
    ap.add_argument("--arm", default=os.path.join(TOP, "build-aarch64"))
    ap.add_argument("--models", default="cnn,mlp,vit")
    ap.add_argument("--qemu-cpu", default="max,cortex-a76")
    a = ap.parse_args()
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="q8-same-") as tmp:
        b64 = os.path.join(tmp, "test64.npy")
        np.save(b64, np.load(os.path.join(MN, "test_x.npy"))[:64])
        for m in a.models.split(","):
            onnx = os.path.join(MN, m + ".onnx")
            for xname, x, shape in (("sample", os.path.join(MN, "sample.npy"), None),
                                    ("b64", b64, "input=64x1x28x28")):
                q = os.path.join(tmp, f"{m}_{xname}.q8")
                cmd = [os.path.join(a.x86, "quantize"), onnx, "-o", q, "--calib",
                       os.path.join(MN, "calib")] + (["--input-shape", shape] if shape else [])
                r = sh(cmd)
                if r.returncode != 0:
                    sys.exit(f"same_bytes_aarch64: {' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
                for kind, model in (("int8", q), ("fp32", onnx)):
                    for cpu in a.qemu_cpu.split(","):
                        for th in (1, 2):
                            want, got = os.path.join(tmp, "x86"), os.path.join(tmp, "arm")
                            for d in (want, got):
                                if os.path.isdir(d):
                                    for f in os.listdir(d):
                                        os.unlink(os.path.join(d, f))
                            run(a.x86, model, x, want, th)
                            run(a.arm, model, x, got, th, cpu)
                            files = sorted(os.listdir(want))
                            same = files == sorted(os.listdir(got)) and all(
                                filecmp.cmp(os.path.join(want, f), os.path.join(got, f),
                                            shallow=False) for f in files)
                            what = f"{m} {xname} {kind} -cpu {cpu} threads {th}"
                            if same:
                                print(f"same bytes  {what}")
                                passed += 1
                                continue
                            if kind == "int8" or files != sorted(os.listdir(got)):
                                print(f"DIFFERENT   {what}")
                                failed += 1
                                continue
                            res = [fp32_close(os.path.join(got, f), os.path.join(want, f))
                                   for f in files]
                            ok = all(r[0] for r in res)
                            print(f"{'close' if ok else 'TOO FAR':11s} {what}: "
                                  + ", ".join(r[1] for r in res))
                            passed += ok
                            failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
