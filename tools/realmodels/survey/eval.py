"""usage: eval.py KEY [--prune F] [--extra 'quantize args'] [--tag T]
FP32: q8run vs ORT on the 4 held-out inputs; INT8: quantize on calib/, .q8 on held-out vs q8 FP32."""
import sys, os, subprocess, time, json, glob, argparse, shlex
import numpy as np
ap = argparse.ArgumentParser(); ap.add_argument("key"); ap.add_argument("--prune"); ap.add_argument("--extra", default="")
ap.add_argument("--tag", default="default"); ap.add_argument("--shape", action="append", default=[])
a = ap.parse_args()
HERE = os.path.dirname(os.path.abspath(__file__))
S = os.path.expanduser(os.environ.get("Q8_SURVEY_DIR", "~/.cache/q8/survey")); B = os.environ.get("Q8_BUILD", os.path.join(HERE, "..", "..", "..", "build"))
model = f"{S}/models/{a.key}.onnx"; inp = f"{S}/inputs/{a.key}"; work = f"{S}/work/{a.key}/{a.tag}"
os.makedirs(work, exist_ok=True)
multi = os.path.isdir(f"{inp}/heldout/input")
def args_for(i):
    if multi:
        return ["--input", f"input={inp}/heldout/input/{i:04d}.npy", "--input", f"state={inp}/heldout/state/{i:04d}.npy"]
    return ["--input", f"{inp}/heldout/{i:04d}.npy"]
bind = ["--bind", f"sr={inp}/sr.npy"] if multi else []
shp = sum((["--input-shape", s] for s in a.shape), [])
def run(cmd, to=300):
    t = time.time(); r = subprocess.run(cmd, capture_output=True, text=True, timeout=to); return r, time.time() - t
def load(d): return {os.path.basename(f)[:-4]: np.load(f) for f in sorted(glob.glob(f"{d}/*.npy"))}
def sqnr(ref, x):
    e = np.sum((ref.astype(np.float64) - x) ** 2); s = np.sum(ref.astype(np.float64) ** 2)
    return float("inf") if e == 0 else 10 * np.log10(s / e)
def cos(r, x):
    r = r.ravel().astype(np.float64); x = x.ravel().astype(np.float64)
    return float(r @ x / (np.linalg.norm(r) * np.linalg.norm(x) + 1e-30))
res = {"key": a.key, "tag": a.tag}
if a.tag == "default":
    fp = []
    for i in range(4):
        r, _ = run([B + "/q8run", model] + args_for(i) + bind + shp + ["--out", f"{work}/q8fp32_{i}"])
        if r.returncode: res["fp32_error"] = r.stderr.strip().splitlines()[-1:]; break
        ortin = args_for(i) + (["--input", f"sr={inp}/sr.npy"] if multi else [])
        r2, _ = run(["node", os.path.join(HERE, "..", "..", "ort", "run_ort.js"), model] + ortin + ["--out", f"{work}/ort_{i}"])
        if r2.returncode: res["ort_error"] = r2.stderr.strip()[-300:]; break
        q, o = load(f"{work}/q8fp32_{i}"), load(f"{work}/ort_{i}")
        for k in o:
            d = np.abs(q[k].astype(np.float64) - o[k]); rel = d.max() / max(np.sqrt(np.mean(o[k].astype(np.float64) ** 2)), 1e-12)
            fp.append((i, k, float(d.max()), float(rel), sqnr(o[k], q[k])))
    res["fp32"] = [dict(zip(("i", "out", "max_abs", "max_rel_rms", "sqnr"), t)) for t in fp]
    if fp: res["fp32_worst_rel"] = max(t[3] for t in fp); res["fp32_min_sqnr"] = min(t[4] for t in fp)
q8 = f"{work}/model.q8"
cmd = [B + "/quantize", model, "-o", q8, "--calib", f"{inp}/calib"] + bind + shp + shlex.split(a.extra)
if a.prune: cmd += ["--prune", a.prune]
res["quantize_cmd"] = " ".join(cmd)
r, dt = run(cmd, 900); res["quantize_s"] = round(dt, 1)
open(f"{work}/quantize.log", "w").write(r.stdout + r.stderr)
if r.returncode:
    res["quantize_error"] = (r.stderr.strip().splitlines() or ["(no stderr)"])[-3:]; res["quantize_rc"] = r.returncode
else:
    res["size_ratio"] = round(os.path.getsize(q8) / os.path.getsize(model), 3); res["q8_bytes"] = os.path.getsize(q8)
    res["quantize_tail"] = (r.stderr.strip().splitlines() or [""])[-4:]
    per = []
    for i in range(4):
        r, _ = run([B + "/q8run", q8] + args_for(i) + bind + shp + ["--out", f"{work}/int8_{i}"])
        if r.returncode: res["int8_run_error"] = r.stderr.strip().splitlines()[-1:]; break
        qi = load(f"{work}/int8_{i}")
        ref = load(f"{S}/work/{a.key}/default/q8fp32_{i}") or load(f"{S}/work/{a.key}/default/ort_{i}")
        if not ref: ref = load(f"{S}/work/{a.key}/default/ort_{i}")
        for k in qi:
            if k in ref: per.append((i, k, sqnr(ref[k], qi[k]), cos(ref[k], qi[k]), float(ref[k].ravel()[0]), float(qi[k].ravel()[0])))
    res["int8"] = [dict(zip(("i", "out", "sqnr", "cos", "ref0", "q0"), t)) for t in per]
    for k in sorted({t[1] for t in per}):
        v = [t[2] for t in per if t[1] == k]; res[f"int8_sqnr_{k}"] = (round(min(v), 2), round(float(np.mean(v)), 2))
json.dump(res, open(f"{work}/result.json", "w"), indent=1)
print(json.dumps({k: v for k, v in res.items() if k not in ("fp32", "int8")}, indent=None))
