"""Survey inputs. usage: gen_inputs.py MODEL_KEY OUTDIR
Writes OUTDIR/calib/ (16 samples, seeds 1000+i), OUTDIR/heldout/ (4, seeds 2000+i).
Single-input models: one .npy per sample. Multi-input (silero): one subfolder per input.
Uses the kit's helpers read-only (sys.dont_write_bytecode: nothing written to the repo)."""
import sys, os, subprocess, tempfile
sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import numpy as np
key, out = sys.argv[1], sys.argv[2]
MODELS = os.path.expanduser("~/.cache/q8/survey/models")
ORT = ["node", os.path.join(HERE, "..", "..", "ort", "run_ort.js")]
PHOTOS = os.path.expanduser("~/.cache/q8/models/photos")

def save(split, i, arrs):
    for name, a in arrs.items():
        d = os.path.join(out, split, name) if len(arrs) > 1 else os.path.join(out, split)
        os.makedirs(d, exist_ok=True)
        np.save(os.path.join(d, f"{i:04d}.npy"), a)

def silero(seed, model):
    import vad_check
    rng = np.random.default_rng(seed)
    # 0.5 s of synthetic voice (vad_check.voice) or noise, streamed through ORT
    # from zero state for 3 chunks; the sample is the 4th chunk + the state then.
    if seed % 4 == 3:
        wav = vad_check.silence(rng, 0.3) * rng.uniform(1, 30) / 32767
    else:
        wav = vad_check.voice(rng, 0.3) * rng.uniform(0.2, 1.0)
    wav = np.asarray(wav, np.float32)
    state = np.zeros((2, 1, 128), np.float32); ctx = np.zeros(64, np.float32)
    with tempfile.TemporaryDirectory() as w:
        np.save(f"{w}/sr.npy", np.array(16000, np.int64))
        for c in range(4):
            x = np.concatenate([ctx, wav[c * 512:(c + 1) * 512]])[None].astype(np.float32)
            if c == 3:
                return {"input": x, "state": state}
            np.save(f"{w}/input.npy", x); np.save(f"{w}/state.npy", state)
            subprocess.run(ORT + [model, "--input", f"input={w}/input.npy", "--input", f"state={w}/state.npy",
                                  "--input", f"sr={w}/sr.npy", "--out", f"{w}/o"], check=True, capture_output=True)
            state = np.load(f"{w}/o/stateN.npy"); ctx = x[0, -64:]

def wake(seed, T, phrase):
    import wakeword
    rng = np.random.default_rng(seed)
    n_samples = (T * 8 + 76 - 1) * 160 + 512 + 12 * 1280
    noise = __import__("vad_check").silence(rng, n_samples / 16000) * rng.uniform(1, 20)
    kind = seed % 4
    if kind != 3:
        text = phrase if kind != 1 else ["good morning", "hello there", "what time is it"][seed % 3]
        voice = wakeword.VOICES[int(rng.integers(len(wakeword.VOICES)))]
        s = wakeword.speak(text, voice, int(rng.integers(120, 200)), int(rng.integers(25, 75)))[: n_samples - 800] * 32767
        end = n_samples - int(rng.integers(1600, 9600)); start = max(0, end - len(s))
        noise[start:end] += s[len(s) - (end - start):] * rng.uniform(0.2, 0.9)
    e = wakeword.embeddings(wakeword.mel_frames(noise))
    j = int(rng.integers(0, len(e) - T + 1))
    return {"x": e[j:j + T][None].astype(np.float32)}

def photo_crop(seed, side):
    from PIL import Image
    rng = np.random.default_rng(seed)
    names = sorted(os.listdir(PHOTOS))
    im = Image.open(os.path.join(PHOTOS, names[seed % len(names)])).convert("RGB")
    s = int(min(im.size) * rng.uniform(0.15, 0.5)); x0 = int(rng.integers(0, im.size[0] - s + 1)); y0 = int(rng.integers(0, im.size[1] - s + 1))
    im = im.crop((x0, y0, x0 + s, y0 + s)).resize((side, side), Image.BICUBIC)
    return {"x": np.asarray(im, np.float32)[None]}  # NHWC, 0..255

def gen(seed):
    if key in ("silero_v5", "silero_v6"): return silero(seed, f"{MODELS}/{key}.onnx")
    if key == "hello_deepa": return wake(seed, 25, "hello deepa")
    if key == "namaste_deepa": return wake(seed, 24, "namaste deepa")
    if key == "coca_cola": return wake(seed, 28, "coca cola")
    if key == "need_help_now": return wake(seed, 28, "need help now")
    if key == "esrgan_slim_x4": return photo_crop(seed, 64)
    if key == "upscaler_default_x2": return photo_crop(seed, 96)
    raise SystemExit("unknown " + key)

for i in range(16): save("calib", i, gen(1000 + i))
for i in range(4): save("heldout", i, gen(2000 + i))
if key.startswith("silero"): np.save(os.path.join(out, "sr.npy"), np.array(16000, np.int64))
print(key, "ok")
