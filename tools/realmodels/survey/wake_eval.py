"""Score shift of a quantized wake-word head, FP32 vs INT8, on many held-out windows.
usage: wake_eval.py KEY CALIBDIR HELDOUTDIR TAG [quantize args...]

Quantizes ~/.cache/q8/survey/models/KEY.onnx on CALIBDIR (extra arguments
passed to quantize as given), runs q8run FP32 (.onnx) and INT8 (.q8) on every
HELDOUTDIR/*.npy and prints one JSON line: the largest |INT8 - FP32| score
over all windows, over the firing ones (FP32 >= 0.5), over the undecided ones
(FP32 in 0.05..0.95, where the sigmoid does not hide a logit shift), over
the others, the decisions at 0.5 that flip, and quantize's report lines.
Binaries from $Q8_BUILD (default build/); work under $Q8_WAKE_DIR/eval/KEY/TAG (default ~/.cache/q8/survey/wake)."""
import sys, os, glob, json, subprocess, hashlib
import numpy as np
HERE = os.path.dirname(os.path.abspath(__file__))
S = os.path.expanduser(os.environ.get("Q8_SURVEY_DIR", "~/.cache/q8/survey"))
WW = os.path.expanduser(os.environ.get("Q8_WAKE_DIR", "~/.cache/q8/survey/wake"))
B = os.environ.get("Q8_BUILD", os.path.join(HERE, "..", "..", "..", "build"))
key, calib, held, tag, extra = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
model = f"{S}/models/{key}.onnx"
work = f"{WW}/eval/{key}/{tag}"; os.makedirs(work, exist_ok=True)
files = sorted(glob.glob(f"{held}/*.npy"))


def scores(m, cache=None):
    if cache and os.path.exists(cache):
        return np.load(cache)
    out = []
    for f in files:
        r = subprocess.run([B + "/q8run", m, "--input", f, "--out", f"{work}/o"], capture_output=True, text=True)
        if r.returncode:
            raise SystemExit(r.stderr)
        out.append(float(np.load(glob.glob(f"{work}/o/*.npy")[0]).ravel()[0]))
    out = np.array(out)
    if cache:
        np.save(cache, out)
    return out


hid = hashlib.sha1(os.path.abspath(held).encode()).hexdigest()[:8]
fp = scores(model, f"{WW}/eval/{key}/fp32_{hid}.npy")
q8 = f"{work}/model.q8"
cmd = [B + "/quantize", model, "-o", q8, "--calib", calib] + extra
r = subprocess.run(cmd, capture_output=True, text=True)
open(f"{work}/quantize.log", "w").write(" ".join(cmd) + "\n" + r.stdout + r.stderr)
if not os.path.exists(q8) or r.returncode not in (0, 3):
    raise SystemExit(f"quantize rc {r.returncode}: {r.stderr[-500:]}")
iq = scores(q8)
np.save(f"{work}/int8.npy", iq)
d = np.abs(iq - fp)
fire = fp >= 0.5; mid = (fp > 0.05) & (fp < 0.95)


def mx(m):
    return round(float(d[m].max()), 4) if m.any() else None


res = {"key": key, "tag": tag, "n": len(fp), "n_fire": int(fire.sum()), "max_all": mx(d >= 0),
       "max_fire": mx(fire), "max_mid": mx(mid), "max_nonfire": mx(~fire),
       "worst": [round(float(fp[d.argmax()]), 3), round(float(iq[d.argmax()]), 3)],
       "flips": int(((iq >= 0.5) != fire).sum()),
       "quantize": [l.strip() for l in (r.stdout + r.stderr).splitlines()
                    if any(w in l for w in ("calibration auto", "weight rounding", "fp32 heads", "SQNR", "FP32"))][:6]}
print(json.dumps(res))
open(f"{work}/result.json", "w").write(json.dumps(res) + "\n")
