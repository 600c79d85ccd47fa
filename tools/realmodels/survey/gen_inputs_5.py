"""Inputs for the fifth survey set (fetch_models_5.sh). usage: gen_inputs_5.py KEY OUTDIR
Writes OUTDIR/calib/ (16 samples, seeds 1000+i) and OUTDIR/heldout/ (4, seeds 2000+i), one .npy each.
Crops of the kit's photos (~/.cache/q8/models/photos), every other sample around the astronaut's
face, resized and normalised as each package's own JavaScript does (lib/fr_*.js for faceplugin)."""
import sys, os
import numpy as np
from PIL import Image
key, out = sys.argv[1], sys.argv[2]
PHOTOS = os.path.expanduser("~/.cache/q8/models/photos")
IMNET = (np.array([0.485, 0.456, 0.406], np.float32), np.array([0.229, 0.224, 0.225], np.float32))
# key: (width, height, channels 1|3, normalisation)
SPEC = {
    "fr_detect": (320, 240, 3, "pm127"), "fr_feature": (112, 112, 3, "pm127"),
    "fr_age": (64, 64, 3, "imnet"), "fr_gender": (64, 64, 3, "imnet"), "fr_pose": (224, 224, 3, "imnet"),
    "fr_expression": (224, 224, 3, "unit"), "fr_eye": (24, 24, 1, "unit"), "fr_landmark": (64, 64, 1, "u256"),
    "fr_liveness": (128, 128, 3, "raw"),
    "yolov5s_tfjs": (640, 640, 3, "unit_nhwc"),   # the TF.js export's input: NHWC RGB / 255
}

def crop(seed, w, h, ch):
    rng = np.random.default_rng(seed)
    names = sorted(os.listdir(PHOTOS))
    if seed % 2 == 0:   # around the astronaut's face (skimage's astronaut.png, 512x512, face near (200, 110))
        im = Image.open(os.path.join(PHOTOS, "astronaut.png")).convert("RGB")
        s = int(rng.uniform(90, 260)); cx = 200 + rng.uniform(-25, 25); cy = 110 + rng.uniform(-20, 20)
        x0 = int(np.clip(cx - s / 2, 0, im.size[0] - s)); y0 = int(np.clip(cy - s / 2, 0, im.size[1] - s))
        box = (x0, y0, x0 + s, y0 + int(s * h / w))
    else:
        im = Image.open(os.path.join(PHOTOS, names[seed % len(names)])).convert("RGB")
        s = int(min(im.size) * rng.uniform(0.6 if key == "yolov5s_tfjs" else 0.3, 1.0)); sh = min(int(s * h / w), im.size[1])
        x0 = int(rng.integers(0, im.size[0] - s + 1)); y0 = int(rng.integers(0, im.size[1] - sh + 1))
        box = (x0, y0, x0 + s, y0 + sh)
    im = im.crop(box).resize((w, h), Image.BILINEAR)
    if ch == 1: im = im.convert("L")
    a = np.asarray(im, np.float32)
    return a[None, None] if ch == 1 else a.transpose(2, 0, 1)[None]

def eye_crop(seed):
    """fr_eye_real: 24x24 grey crops around the astronaut's eyes (about (202, 102) and (246, 102)
    in the 512x512 photo), size 18-36 px, moved up to 4 px, brightness 0.6-1.3x, every other one mirrored."""
    rng = np.random.default_rng(seed)
    im = Image.open(os.path.join(PHOTOS, "astronaut.png")).convert("L")
    cx, cy = (202, 102) if seed % 2 == 0 else (246, 102)
    s = rng.uniform(18, 36); cx += rng.uniform(-4, 4); cy += rng.uniform(-4, 4)
    e = im.crop((int(cx - s / 2), int(cy - s / 2), int(cx + s / 2), int(cy + s / 2))).resize((24, 24), Image.BILINEAR)
    if seed % 4 >= 2: e = e.transpose(Image.FLIP_LEFT_RIGHT)
    a = np.clip(np.asarray(e, np.float32) * rng.uniform(0.6, 1.3), 0, 255)
    return np.ascontiguousarray((a / 255)[None, None], np.float32)

def face_only(seed, w, h, ch):
    """KEY_face: every sample a face crop (the astronaut's, centre about (220, 118), side 100-150 px,
    moved up to 10 px, brightness 0.6-1.3x, every other one mirrored): in-distribution for the
    face-crop models, though one face only."""
    rng = np.random.default_rng(seed)
    im = Image.open(os.path.join(PHOTOS, "astronaut.png")).convert("RGB")
    s = rng.uniform(100, 150); cx = 220 + rng.uniform(-10, 10); cy = 118 + rng.uniform(-10, 10)
    f = im.crop((int(cx - s / 2), int(cy - s / 2), int(cx + s / 2), int(cy + s / 2))).resize((w, h), Image.BILINEAR)
    if seed % 2: f = f.transpose(Image.FLIP_LEFT_RIGHT)
    if ch == 1: f = f.convert("L")
    a = np.clip(np.asarray(f, np.float32) * rng.uniform(0.6, 1.3), 0, 255)
    return a[None, None] if ch == 1 else a.transpose(2, 0, 1)[None]

def gen(seed):
    if key == "fr_eye_real": return eye_crop(seed)
    if key.endswith("_face"):
        w, h, ch, norm = SPEC[key[:-5]]
        return normalise(face_only(seed, w, h, ch), norm)
    w, h, ch, norm = SPEC[key]
    return normalise(crop(seed, w, h, ch), norm)

def normalise(x, norm):
    if norm == "pm127": x = (x - 127) / 128
    elif norm == "imnet": x = (x / 255 - IMNET[0][:, None, None]) / IMNET[1][:, None, None]
    elif norm == "unit": x = x / 255
    elif norm == "unit_nhwc": x = x.transpose(0, 2, 3, 1) / 255
    elif norm == "u256": x = x / 256
    return np.ascontiguousarray(x, np.float32)

if key not in SPEC and key != "fr_eye_real" and key[:-5] not in SPEC: raise SystemExit("unknown " + key)
for split, base, n in (("calib", 1000, 16), ("heldout", 2000, 4)):
    os.makedirs(os.path.join(out, split), exist_ok=True)
    for i in range(n): np.save(os.path.join(out, split, f"{i:04d}.npy"), gen(base + i))
print(key, "ok")
