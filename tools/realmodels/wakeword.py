"""Inputs of openWakeWord's wake-word heads (kit model oww_hey_jarvis): spoken
phrases from espeak-ng over noise, turned into the 16 speech embeddings a
head reads, the way openWakeWord's Python library makes them:

  audio (16 kHz, int16 scale)
  -> log-mel frames every 160 samples (the package's melspectrogram.onnx:
     STFT as two 512-tap Conv, power, 32 mel bands, 10 log10 max(., 1e-10),
     floored at the clip's max - 80 dB, then x / 10 + 2), computed here in
     float64 from that model's weights
  -> one 96-value embedding per 76-frame window, a window every 8 frames
     (the package's embedding_model.onnx, run by ONNX Runtime: the features
     do not depend on q8)
  -> 16 consecutive embeddings: (1, 16, 96), 1.96 s of audio.

The frames are continuous here (every 160 samples), as in openWakeWord's
streaming code; make_inputs.oww_mel keeps the 5-of-8 frames of the npm
package's JavaScript for the embedding model's own inputs. With continuous
frames the 'hey jarvis' head fires on espeak-ng's 'hey jarvis' and not on
the other phrases; with the package's frames it fires on nothing.

Needs espeak-ng (Debian's espeak-ng) and ONNX Runtime (tools/ort, npm ci).
"""

import os
import shutil
import subprocess
import tempfile
import wave

import numpy as np

import kit

SR = 16000
FRAMES = 16 * 8 + 76 - 8           # 196 mel frames feed 16 embeddings
# a clip: 16 embeddings' worth of audio and 12 more moments (0.96 s)
SAMPLES = (FRAMES + 12 * 8 - 1) * 160 + 512  # 47,072 samples

# espeak-ng voices (language + variant) and phrases: the wake phrase, near
# misses and unrelated speech
VOICES = ["en-us", "en-gb", "en-gb-scotland", "en-gb-x-rp", "en-029", "en-gb-x-gbclan",
          "en-us+f1", "en-us+f3", "en-gb+m3", "en-gb+f2", "en-us+m2", "en-gb-x-rp+f4"]
WAKE = "hey jarvis"
OTHERS = ["hey travis", "hey marvin", "jarvis", "good morning", "what time is it",
          "turn on the lights", "hey there", "play some music", "harvest"]


def need_tools():
    if not shutil.which("espeak-ng"):
        raise SystemExit("realmodels: oww_hey_jarvis's inputs need espeak-ng "
                         "(apt-get install espeak-ng)")


def speak(text, voice, speed, pitch):
    """espeak-ng's rendering of text at 16 kHz, as floats in [-1, 1]."""
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "a.wav")
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch),
                        "-w", p, text], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        with wave.open(p) as w:
            sr = w.getframerate()
            x = np.frombuffer(w.readframes(w.getnframes()), np.int16).astype(np.float64)
    x /= 32768.0
    # band-limited resampling (espeak-ng writes 22,050 Hz)
    n = int(round(len(x) * SR / sr))
    return np.fft.irfft(np.fft.rfft(x)[: n // 2 + 1], n) * (n / len(x))


def mel_weights():
    """The package's melspectrogram.onnx as float64 arrays: the STFT's real
    and imaginary 512-tap filters and the mel matrix."""
    import onnx
    from onnx import numpy_helper
    path = os.path.join(kit.cache_dir(), "oww_melspectrogram.onnx")
    if not os.path.exists(path):
        raise SystemExit(f"realmodels: no {path}: run tools/realmodels/fetch.py first")
    w = {t.name: numpy_helper.to_array(t).astype(np.float64)
         for t in onnx.load(path).graph.initializer}
    return w["0.stft.conv_real.weight"][:, 0], w["0.stft.conv_imag.weight"][:, 0], w["1.melW"]


def log_mel(x, n, weights):
    """10 log10 of the mel power of n frames of x (512 samples every 160)."""
    re, im, mel_w = weights
    win = np.stack([x[i * 160:i * 160 + 512] for i in range(n)])
    p = (win @ re.T) ** 2 + (win @ im.T) ** 2
    return 10 * np.log10(np.maximum(p @ mel_w, 1e-10))


def mel_frames(audio):
    """Continuous log-mel frames of audio (int16 scale), float64."""
    x = np.asarray(audio, np.float64)
    db = log_mel(x, (len(x) - 512) // 160 + 1, mel_weights())
    return np.maximum(db, db.max() - 80) / 10 + 2


def ort_run(model, arrays):
    """ONNX Runtime's first output for each array (ort_many.js)."""
    runner = os.path.join(kit.HERE, "ort_many.js")
    with tempfile.TemporaryDirectory() as d:
        files = []
        for i, a in enumerate(arrays):
            files.append(os.path.join(d, f"{i:05d}.npy"))
            np.save(files[-1], a)
        out = os.path.join(d, "out")
        p = subprocess.run(["node", runner, model, "run", out] + files,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise SystemExit(f"realmodels: ONNX Runtime on {os.path.basename(model)}: "
                             f"{p.stderr.strip()}")
        return [np.load(os.path.join(out, f"{i:04d}.npy")) for i in range(len(files))]


def embeddings(mel):
    """The (K, 96) embeddings of a clip's mel frames: one per 76-frame window,
    a window every 8 frames, by ONNX Runtime."""
    model = os.path.join(kit.cache_dir(), "oww_embedding.onnx")
    if not os.path.exists(model):
        import fetch
        fetch.fetch(["oww_embedding"], photos=False)
    wins = [mel[k:k + 76][None, :, :, None].astype(np.float32)
            for k in range(0, len(mel) - 76 + 1, 8)]
    return np.stack([e.ravel() for e in ort_run(model, wins)])


def clips(rng, n):
    """n clips of SAMPLES samples (int16 scale) with what each one says: half
    the wake phrase, a quarter other phrases, a quarter noise alone (room
    noise, or the kit's synthetic babble), each at a random level."""
    import vad_check
    out = []
    for i in range(n):
        noise = vad_check.silence(rng, SAMPLES / SR) * rng.uniform(1, 20)
        kind = ("wake", "other", "wake", "none")[i % 4]
        if kind == "none":
            if rng.uniform() < 0.5:
                noise += vad_check.voice(rng, SAMPLES / SR)[:SAMPLES] * rng.uniform(0.05, 0.4)
            out.append((noise, {"says": "", "voice": ""}))
            continue
        text = WAKE if kind == "wake" else OTHERS[int(rng.integers(len(OTHERS)))]
        voice = VOICES[int(rng.integers(len(VOICES)))]
        s = speak(text, voice, int(rng.integers(120, 200)), int(rng.integers(25, 75)))
        s = s[:SAMPLES - 800]
        # the phrase ends 0.1-0.6 s before the clip does
        end = SAMPLES - int(rng.integers(1600, 9600))
        start = max(0, end - len(s))
        noise[start:end] += s[len(s) - (end - start):] * rng.uniform(0.2, 0.9)
        out.append((noise, {"says": text, "voice": voice}))
    return out


def samples(seed, n):
    """Yields (array (1, 16, 96), description) for n clips. Each clip is
    scored as a streaming detector would, every 80 ms (by ONNX Runtime on the
    head), and the sample is the moment it scores highest: what the
    detector reports for that utterance (near misses included); for noise
    alone a moment at random."""
    need_tools()
    rng = np.random.default_rng(seed)
    head = os.path.join(kit.cache_dir(), "oww_hey_jarvis.onnx")
    if not os.path.exists(head):
        import fetch
        fetch.fetch(["oww_hey_jarvis"], photos=False)
    for audio, desc in clips(rng, n):
        e = embeddings(mel_frames(audio * 32767.0))
        seqs = [e[j:j + 16][None].astype(np.float32) for j in range(len(e) - 16 + 1)]
        if desc["says"]:
            scores = [float(s.ravel()[0]) for s in ort_run(head, seqs)]
            j = int(np.argmax(scores))
        else:
            j = int(rng.integers(len(seqs)))
        yield seqs[j], dict(desc, moment_s=round(j * 0.08, 2))
