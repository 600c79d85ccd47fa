"""Wake-word calibration and held-out sets that contain the wake phrase.
usage: wake_sets.py KEY OUTDIR [--calib N] [--heldout N]

The survey's own inputs (gen_inputs.py) take one random window of each clip,
so the heads almost never fire on them. Here, as in the kit's wakeword.py,
each spoken clip is scored every 80 ms by ONNX Runtime on the head and the
sample is the window it scores highest (what a streaming detector reports);
half the clips say the wake phrase (espeak-ng, random voice, speed 110-210,
pitch 20-80, level, noise), a quarter near misses / other phrases, a quarter
noise alone (a random window). Writes OUTDIR/calib/ (seeds 3000+i) and
OUTDIR/heldout/ (seeds 4000+i), one .npy per sample, and OUTDIR/meta.json
(what each sample says and its ORT FP32 score). Batched through ort_many.js.
Uses the kit's helpers read-only (nothing written to the repository)."""
import sys, os, json, argparse
sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import numpy as np
import wakeword, vad_check

MODELS = os.path.expanduser(os.environ.get("Q8_SURVEY_DIR", "~/.cache/q8/survey")) + "/models"
SPEC = {  # key: (T embeddings, wake phrase, other phrases)
    "coca_cola": (28, "coca cola", ["coke", "cocoa", "coca", "cola", "go call a", "coca coffee",
                                    "good morning", "hello there", "what time is it"]),
    "need_help_now": (28, "need help now", ["need help", "help me", "i need a hand now", "now",
                                            "good morning", "hello there", "what time is it"]),
    "hello_deepa": (25, "hello deepa", ["hello", "deepa", "hello deeper", "namaste deepa",
                                        "good morning", "hello there", "what time is it"]),
    "namaste_deepa": (24, "namaste deepa", ["namaste", "deepa", "hello deepa", "nam a stay",
                                            "good morning", "hello there", "what time is it"]),
}

ap = argparse.ArgumentParser(); ap.add_argument("key"); ap.add_argument("out")
ap.add_argument("--calib", type=int, default=48); ap.add_argument("--heldout", type=int, default=64)
a = ap.parse_args()
T, WAKE, OTHERS = SPEC[a.key]
head = f"{MODELS}/{a.key}.onnx"
N = (T * 8 + 76 - 8 + 12 * 8 - 1) * 160 + 512   # T embeddings and 12 more moments


def clip(seed):
    rng = np.random.default_rng(seed)
    noise = vad_check.silence(rng, N / 16000) * rng.uniform(1, 20)
    kind = ("wake", "other", "wake", "none")[seed % 4]
    if kind == "none":
        if rng.uniform() < 0.5:
            noise += vad_check.voice(rng, N / 16000)[:N] * rng.uniform(0.05, 0.4)
        return noise, {"says": "", "voice": "", "seed": seed}
    text = WAKE if kind == "wake" else OTHERS[int(rng.integers(len(OTHERS)))]
    voice = wakeword.VOICES[int(rng.integers(len(wakeword.VOICES)))]
    s = wakeword.speak(text, voice, int(rng.integers(110, 210)), int(rng.integers(20, 80)))[:N - 800]
    end = N - int(rng.integers(1600, 9600)); start = max(0, end - len(s))
    noise[start:end] += s[len(s) - (end - start):] * rng.uniform(0.2, 0.9)
    return noise, {"says": text, "voice": voice, "seed": seed}


def make(split, seeds):
    clips = [clip(s) for s in seeds]
    embs = [wakeword.embeddings(wakeword.mel_frames(x * 32767.0)) for x, _ in clips]
    wins = [[e[j:j + T][None].astype(np.float32) for j in range(len(e) - T + 1)] for e in embs]
    flat = [w for ws in wins for w in ws]
    sc = [float(s.ravel()[0]) for s in wakeword.ort_run(head, flat)]
    d = os.path.join(a.out, split); os.makedirs(d, exist_ok=True)
    meta, k = [], 0
    for i, ((_, desc), ws) in enumerate(zip(clips, wins)):
        s = sc[k:k + len(ws)]; k += len(ws)
        j = int(np.argmax(s)) if desc["says"] else int(np.random.default_rng(desc["seed"]).integers(len(ws)))
        np.save(os.path.join(d, f"{i:04d}.npy"), ws[j])
        meta.append(dict(desc, moment=j, ort_score=s[j]))
    return meta


m = {"calib": make("calib", range(3000, 3000 + a.calib)), "heldout": make("heldout", range(4000, 4000 + a.heldout))}
json.dump(m, open(os.path.join(a.out, "meta.json"), "w"), indent=1)
for split, v in m.items():
    w = [x["ort_score"] for x in v if x["says"] == WAKE]; o = [x["ort_score"] for x in v if x["says"] != WAKE]
    print(a.key, split, f"wake clips {len(w)}: fire>=0.5 {sum(x >= .5 for x in w)}, median {np.median(w):.3f};",
          f"others {len(o)}: fire {sum(x >= .5 for x in o)}, max {max(o):.3f}")
