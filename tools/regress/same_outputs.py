#!/usr/bin/python3
"""Behaviour check for refactors: every shipped and zoo model, FP32 and INT8,
run by a reference commit's tools and by this tree's, outputs compared byte
for byte.

    /usr/bin/python3 tools/regress/same_outputs.py [--ref REV] [--build DIR]
        [--cache DIR] [--cuda] [--keep]

- The reference (default HEAD) is built from `git archive REV` in
  CACHE/ref-SHA (kept between runs); this tree's tools come from --build
  (default build/, built by the caller).
- Models: models/mnist/{mlp,cnn,vit,vit_opset17}.onnx on sample.npy and on
  the first 64 held-out digits, and the zoo of tools/zoo/make_zoo.py (made
  once in CACHE/zoo), each on its sample input.
- Variants: FP32 (the .onnx), INT8 with each calibration method, INT8 with
  50% unstructured and 2:4 pruning. Each .q8 is made by each side's own `quantize` (the quantizer is part
  of the behaviour), each run with 1 and 2 threads; with --cuda (both builds
  configured with -DQ8_CUDA=ON) also with `--device cuda` in host emulation
  (Q8_CUDA_EMULATE=1).
- Prints one line per case and a summary; exit 1 if any output differs in a
  single byte, or if a case fails on one side only (a case that fails on both
  sides the same way, e.g. a model the quantizer refuses, counts as same).
"""
import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def build_ref(rev, cache, cuda):
    sha = sh(["git", "-C", TOP, "rev-parse", rev]).stdout.strip()
    if not sha:
        sys.exit(f"same_outputs: unknown revision {rev}")
    src = os.path.join(cache, f"ref-{sha[:12]}")
    bld = os.path.join(src, "build-cuda" if cuda else "build")
    if os.path.exists(os.path.join(bld, "q8run")):
        return sha, bld
    if not os.path.isdir(src):
        os.makedirs(src)
        arch = subprocess.Popen(["git", "-C", TOP, "archive", sha], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", src], stdin=arch.stdout, check=True)
        arch.wait()
    flags = ["-DQ8_TESTS=OFF"] + (["-DQ8_CUDA=ON"] if cuda else [])
    print(f"building the reference {sha[:12]} in {bld}", file=sys.stderr)
    r = sh(["cmake", "-S", src, "-B", bld] + flags)
    if r.returncode == 0:
        r = sh(["cmake", "--build", bld, "-j", str(os.cpu_count() or 2)])
    if r.returncode != 0:
        sys.exit(f"same_outputs: building {sha[:12]} failed:\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return sha, bld


def make_models(cache):
    """[(name, onnx, {input: npy}, calib_dir)]"""
    zoo = os.path.join(cache, "zoo")
    if not os.path.exists(os.path.join(zoo, "manifest.json")):
        print("making the zoo in", zoo, file=sys.stderr)
        r = sh(["/usr/bin/python3", os.path.join(TOP, "tools/zoo/make_zoo.py"), zoo])
        if r.returncode != 0:
            sys.exit("same_outputs: make_zoo.py failed:\n" + r.stderr[-3000:])
    models = []
    mn = os.path.join(TOP, "models/mnist")
    batch64 = os.path.join(cache, "mnist_test64.npy")
    if not os.path.exists(batch64):
        import numpy as np
        np.save(batch64, np.load(os.path.join(mn, "test_x.npy"))[:64])
    for m in ["mlp", "cnn", "vit", "vit_opset17"]:
        onnx = os.path.join(mn, m + ".onnx")
        calib = os.path.join(mn, "calib")
        models.append((f"mnist_{m}", onnx, {"input": os.path.join(mn, "sample.npy")}, calib, None))
        models.append((f"mnist_{m}_b64", onnx, {"input": batch64}, calib, "input=64x1x28x28"))
    for f in sorted(os.listdir(zoo)):
        if not f.endswith(".onnx"):
            continue
        name = f[:-5]
        ind = os.path.join(zoo, name + ".inputs")
        inputs = {i[:-4]: os.path.join(ind, i) for i in sorted(os.listdir(ind)) if i.endswith(".npy")}
        models.append((name, os.path.join(zoo, f), inputs, ind, None))
    return models


VARIANTS = [
    ("fp32", None),
    ("int8", []),
    ("int8_minmax", ["--calib-method", "minmax"]),
    ("int8_entropy", ["--calib-method", "entropy"]),
    ("prune50", ["--prune", "0.5"]),
    ("prune24", ["--prune-mode", "2:4"]),
]


def run_case(bld, model, inputs, shape, out, threads, device, env):
    cmd = [os.path.join(bld, "q8run"), model, "--out", out, "--threads", str(threads)]
    for k, v in inputs.items():
        cmd += ["--input", f"{k}={v}"]
    if device:
        cmd += ["--device", device]
    return sh(cmd, env=env)


def quantize(bld, onnx, out, calib, shape, extra):
    cmd = [os.path.join(bld, "quantize"), onnx, "-o", out, "--calib", calib] + extra
    if shape:
        cmd += ["--input-shape", shape]
    return sh(cmd)


def compare_dirs(a, b):
    fa, fb = sorted(os.listdir(a)), sorted(os.listdir(b))
    if fa != fb:
        return f"different output files: {fa} vs {fb}"
    for f in fa:
        if not filecmp.cmp(os.path.join(a, f), os.path.join(b, f), shallow=False):
            return f"{f} differs"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ref", default="HEAD")
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    ap.add_argument("--cache", default=os.path.expanduser(os.environ.get("Q8_CACHE", "~/.cache/q8")) + "/regress")
    ap.add_argument("--cuda", action="store_true", help="also --device cuda in host emulation")
    ap.add_argument("--only", help="comma-separated model names")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    a = ap.parse_args()
    os.makedirs(a.cache, exist_ok=True)
    sha, ref = build_ref(a.ref, a.cache, a.cuda)
    new = os.path.abspath(a.build)
    for b in (ref, new):
        if not os.path.exists(os.path.join(b, "q8run")):
            sys.exit(f"same_outputs: no q8run in {b}")
    models = make_models(a.cache)
    if a.only:
        keep = set(a.only.split(","))
        models = [m for m in models if m[0] in keep]
    work = tempfile.mkdtemp(prefix="q8-same-")
    env_emu = dict(os.environ, Q8_CUDA_EMULATE="1")
    devices = [(None, None)] + ([("cuda", env_emu)] if a.cuda else [])
    n_same = n_diff = 0
    for name, onnx, inputs, calib, shape in models:
        for vname, extra in VARIANTS:
            files = {}
            fail = {}
            for side, bld in (("ref", ref), ("new", new)):
                if extra is None:
                    files[side] = onnx
                    continue
                q = os.path.join(work, f"{name}.{vname}.{side}.q8")
                r = quantize(bld, onnx, q, calib, shape, extra)
                if r.returncode != 0:
                    fail[side] = (r.returncode, (r.stderr.strip().splitlines() or [""])[0])
                files[side] = q
            if fail:
                same = fail.get("ref") == fail.get("new")
                tag = "same" if same else "DIFF"
                n_same += same
                n_diff += not same
                print(f"{tag} {name} {vname}: quantize ref={fail.get('ref')} new={fail.get('new')}")
                continue
            for dev, env in devices:
                for threads in (1, 2):
                    if dev and threads == 2:
                        continue
                    res = {}
                    for side, bld in (("ref", ref), ("new", new)):
                        out = os.path.join(work, f"{name}.{vname}.{dev}.{threads}.{side}")
                        os.makedirs(out)
                        r = run_case(bld, files[side], inputs, shape, out, threads, dev, env)
                        res[side] = (out, r.returncode, (r.stderr.strip().splitlines() or [""])[0])
                    case = f"{name} {vname} {dev or 'cpu'} t{threads}"
                    (oa, ra, ea), (ob, rb, eb) = res["ref"], res["new"]
                    if ra != 0 or rb != 0:
                        same = (ra, ea) == (rb, eb)
                        why = f"q8run ref=({ra}, {ea}) new=({rb}, {eb})"
                    else:
                        d = compare_dirs(oa, ob)
                        same, why = d is None, d or ""
                    n_same += same
                    n_diff += not same
                    print(f"{'same' if same else 'DIFF'} {case} {why}".rstrip(), flush=True)
    if not a.keep:
        shutil.rmtree(work)
    else:
        print("work folder:", work)
    print(f"\nreference {sha[:12]} ({ref}) vs {new}: {n_same} same, {n_diff} different")
    sys.exit(1 if n_diff else 0)


if __name__ == "__main__":
    main()
