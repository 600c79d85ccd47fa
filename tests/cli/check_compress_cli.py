#!/usr/bin/python3
"""quantize --compress-weights end to end, on the shipped MNIST models: on
the CNN `on` writes a smaller file than `off` and `auto` (a dense model:
the same bytes as `off`); the MLP with `--prune 0.5` (its first and last
layers dense, most of its weights) is smaller with `auto` than with `off`; q8run's
outputs are the same bytes for all of them; a bad value exits 2 with one
line naming the option.

    check_compress_cli.py BUILD_DIR SOURCE_DIR
"""
import os
import subprocess
import sys
import tempfile


def run(cmd):
    return subprocess.run(cmd, capture_output=True)


def main():
    build, src = sys.argv[1], sys.argv[2]
    m = os.path.join(src, "models", "mnist")
    fails = []
    with tempfile.TemporaryDirectory() as d:
        def quantize(name, extra, model="cnn"):
            out = os.path.join(d, name + ".q8")
            p = run([os.path.join(build, "quantize"), os.path.join(m, model + ".onnx"), "-o", out,
                     "--calib", os.path.join(m, "calib"), "--min-sqnr", "off"] + extra)
            if p.returncode != 0:
                sys.exit(f"quantize {extra} failed: {p.stderr.decode()}")
            y = os.path.join(d, name + ".out")
            p = run([os.path.join(build, "q8run"), out, "--input", os.path.join(m, "sample.npy"),
                     "--out", y])
            if p.returncode != 0:
                sys.exit(f"q8run {name} failed: {p.stderr.decode()}")
            outs = b"".join(open(os.path.join(y, f), "rb").read() for f in sorted(os.listdir(y)))
            return open(out, "rb").read(), outs

        off, y_off = quantize("off", ["--compress-weights", "off"])
        on, y_on = quantize("on", ["--compress-weights", "on"])
        auto, y_auto = quantize("auto", [])
        p_off, yp_off = quantize("p_off", ["--prune", "0.5", "--compress-weights", "off"], "mlp")
        p_auto, yp_auto = quantize("p_auto", ["--prune", "0.5"], "mlp")
        print(f"dense: off {len(off)} B, on {len(on)} B, auto {len(auto)} B; "
              f"pruned MLP: off {len(p_off)} B, auto {len(p_auto)} B")
        if not len(on) < len(off):
            fails.append("on is not smaller than off")
        if auto != off:
            fails.append("auto on a dense model differs from off")
        if not len(p_auto) < len(p_off):
            fails.append("pruned: auto is not smaller than off")
        if not (y_off == y_on == y_auto):
            fails.append("dense: outputs differ")
        if yp_off != yp_auto:
            fails.append("pruned: outputs differ")
        p = run([os.path.join(build, "quantize"), os.path.join(m, "cnn.onnx"), "-o",
                 os.path.join(d, "bad.q8"), "--calib", os.path.join(m, "calib"),
                 "--compress-weights", "maybe"])
        err = p.stderr.decode()
        if p.returncode != 2 or "--compress-weights must be on, off or auto" not in err \
                or err.count("\n") != 1 or os.path.exists(os.path.join(d, "bad.q8")):
            fails.append(f"a bad value: exit {p.returncode}, stderr {err!r}")
    for f in fails:
        print("FAIL:", f)
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
