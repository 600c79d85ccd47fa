"""Task metrics of a quantized model's outputs against the FP32 outputs of the
same model on the same inputs (no labels: FP32 is the reference).

Every function takes lists with one array per held-out sample and pools over
them (an IoU over all pixels of all samples, an F1 over all boxes, a CER over
all characters).
"""

import numpy as np


def sqnr_db(ref, got):
    """Signal-to-quantization-noise ratio: 10 log10(sum ref^2 / sum err^2)."""
    r = np.concatenate([np.asarray(a, np.float64).ravel() for a in ref])
    g = np.concatenate([np.asarray(a, np.float64).ravel() for a in got])
    err = np.sum((r - g) ** 2)
    sig = np.sum(r ** 2)
    if err == 0:
        return float("inf")
    return float(10 * np.log10(sig / err)) if sig > 0 else float("-inf")


def cosine(ref, got):
    r = np.concatenate([np.asarray(a, np.float64).ravel() for a in ref])
    g = np.concatenate([np.asarray(a, np.float64).ravel() for a in got])
    n = np.linalg.norm(r) * np.linalg.norm(g)
    return float(np.dot(r, g) / n) if n > 0 else float("nan")


# ---- connected components (4-connected), by runs and union-find ----------

def components(mask):
    """Labels of the 4-connected components of a 2-D bool mask: a list of
    (ys, xs) index arrays, one per component."""
    parent = []

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    runs = []   # (row, x0, x1, id)
    prev = []
    for y in range(mask.shape[0]):
        row = mask[y]
        d = np.diff(np.concatenate([[0], row.astype(np.int8), [0]]))
        starts, ends = np.flatnonzero(d == 1), np.flatnonzero(d == -1)
        cur = []
        j = 0
        for x0, x1 in zip(starts, ends):
            rid = len(parent)
            parent.append(rid)
            while j < len(prev) and prev[j][1] <= x0:
                j += 1
            k = j
            while k < len(prev) and prev[k][0] < x1:
                a, b = find(prev[k][2]), find(rid)
                if a != b:
                    parent[b] = a
                k += 1
            cur.append((x0, x1, rid))
            runs.append((y, x0, x1, rid))
        prev = cur
    groups = {}
    for y, x0, x1, rid in runs:
        groups.setdefault(find(rid), []).append((y, x0, x1))
    out = []
    for rs in groups.values():
        ys = np.concatenate([np.full(x1 - x0, y) for y, x0, x1 in rs])
        xs = np.concatenate([np.arange(x0, x1) for y, x0, x1 in rs])
        out.append((ys, xs))
    return out


def box_iou(a, b):
    """IoU of two boxes (x0, y0, x1, y1)."""
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def match_f1(ref, got, same):
    """F1 of got against ref (lists per sample), matching each ref item to at
    most one got item greedily where same(r, g) holds. Both empty: 1."""
    tp = n_ref = n_got = 0
    for rs, gs in zip(ref, got):
        n_ref += len(rs)
        n_got += len(gs)
        used = set()
        for r in rs:
            for j, g in enumerate(gs):
                if j not in used and same(r, g):
                    used.add(j)
                    tp += 1
                    break
    if n_ref + n_got == 0:
        return 1.0
    return 2.0 * tp / (n_ref + n_got)


# ---- PP-OCR detection: DB post-processing --------------------------------

def db_boxes(prob, thresh=0.3, box_thresh=0.6, unclip=1.5, min_size=3):
    """PaddleOCR's DBPostProcess, simplified to axis-aligned boxes (the kit's
    text lines are within 4 degrees of horizontal): components of prob >
    thresh, scored by the mean probability in their box (score_mode fast),
    dropped below box_thresh, grown by area * unclip / perimeter."""
    p = np.asarray(prob).reshape(prob.shape[-2:])
    boxes = []
    for ys, xs in components(p > thresh):
        x0, x1, y0, y1 = xs.min(), xs.max() + 1, ys.min(), ys.max() + 1
        w, h = x1 - x0, y1 - y0
        if min(w, h) < min_size:
            continue
        if p[y0:y1, x0:x1].mean() < box_thresh:
            continue
        d = w * h * unclip / (2 * (w + h))
        boxes.append((x0 - d, y0 - d, x1 + d, y1 + d))
    return boxes


def detection(ref, got, thresh=0.3):
    a = np.concatenate([np.asarray(r).ravel() > thresh for r in ref])
    b = np.concatenate([np.asarray(g).ravel() > thresh for g in got])
    union = np.sum(a | b)
    iou = float(np.sum(a & b) / union) if union else 1.0
    f1 = match_f1([db_boxes(r) for r in ref], [db_boxes(g) for g in got],
                  lambda r, g: box_iou(r, g) >= 0.5)
    return {"map_iou": iou, "box_f1": f1}


# ---- PP-OCR recognition: CTC greedy decode -------------------------------

def ctc_greedy(probs, keys):
    """Argmax per time step, repeats merged, blanks (class 0) dropped; class i
    is keys[i-1], the last class the space (use_space_char)."""
    idx = np.asarray(probs).reshape(-1, np.asarray(probs).shape[-1]).argmax(-1)
    chars = list(keys) + [" "]
    out, last = [], -1
    for i in idx:
        if i != last and i != 0:
            out.append(chars[i - 1])
        last = i
    return "".join(out)


def edit_distance(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def cer(refs, gots):
    """Characters changed (edit distance) per reference character, pooled."""
    chars = sum(len(t) for t in refs)
    return sum(edit_distance(r, g) for r, g in zip(refs, gots)) / chars if chars else 0.0


def recognition(ref, got, keys, truth=None):
    """CER of the decodes against FP32's. With truth (the rendered text of each
    line) also both decodes against it, and the CER against FP32 on the lines
    FP32 reads right: FP32's own misreadings flip with any small change of the
    input (docs/accuracy.md), and count in the plain CER against FP32."""
    # the spaces at a decode's ends dropped: a crop's margins read as spaces
    # (PaddleOCR's own RecMetric drops every space); the text has none there
    rt = [ctc_greedy(r, keys).strip(" ") for r in ref]
    gt = [ctc_greedy(g, keys).strip(" ") for g in got]
    res = {"cer": cer(rt, gt), "lines_equal": sum(r == g for r, g in zip(rt, gt)) / len(rt)}
    if truth is not None:
        ok = [i for i, (t, r) in enumerate(zip(truth, rt)) if t == r]
        res.update({"cer_truth": cer(truth, gt), "cer_truth_fp32": cer(truth, rt),
                    "lines_read_fp32": len(ok),
                    "cer_read": cer([rt[i] for i in ok], [gt[i] for i in ok])})
    return res


# ---- classification and segmentation -------------------------------------

def classification(ref, got):
    same = [int(np.argmax(r)) == int(np.argmax(g)) for r, g in zip(ref, got)]
    res = {"agreement": sum(same) / len(same)}
    classes = np.asarray(ref[0]).size
    if classes >= 5:
        # the share of FP32's top 3 classes that are in the quantized top 3
        k = 3
        top = [len(set(np.argsort(-np.asarray(r).ravel())[:k]) &
                   set(np.argsort(-np.asarray(g).ravel())[:k])) / k for r, g in zip(ref, got)]
        res["top3_overlap"] = float(np.mean(top))
    return res


def segmentation(ref, got, thresh=0.5):
    a = np.concatenate([np.asarray(r).ravel() > thresh for r in ref])
    b = np.concatenate([np.asarray(g).ravel() > thresh for g in got])
    union = np.sum(a | b)
    return {"mask_iou": float(np.sum(a & b) / union) if union else 1.0}


# ---- BlazeFace: anchors, sigmoid scores, NMS -----------------------------

def blazeface_boxes(outs, score=0.5, nms_iou=0.3):
    """Faces from the four outputs (scores 512 + 384, boxes 512x16 + 384x16):
    anchors on a 16x16 grid (2 each) and an 8x8 grid (6 each), offsets in
    pixels of the 128x128 input, MediaPipe's 0.5 score and 0.3 NMS."""
    s16, s8, b16, b8 = (np.asarray(o) for o in outs)
    boxes = []
    for scores, regs, cells, per in ((s16, b16, 16, 2), (s8, b8, 8, 6)):
        scores = scores.reshape(-1)
        regs = regs.reshape(-1, 16)
        # sigmoid(s) > score, written on the logit (no overflow in exp)
        for k in np.flatnonzero(scores > np.log(score / (1 - score))):
            cell = k // per
            ax, ay = (cell % cells + 0.5) / cells, (cell // cells + 0.5) / cells
            cx, cy = ax + regs[k, 0] / 128, ay + regs[k, 1] / 128
            w, h = regs[k, 2] / 128, regs[k, 3] / 128
            boxes.append((float(scores[k]), (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)))
    boxes.sort(key=lambda t: -t[0])
    kept = []
    for s, b in boxes:
        if all(box_iou(b, k) < nms_iou for k in kept):
            kept.append(b)
    return kept


def faces(ref, got):
    rb = [blazeface_boxes(r) for r in ref]
    gb = [blazeface_boxes(g) for g in got]
    return {"face_f1": match_f1(rb, gb, lambda r, g: box_iou(r, g) >= 0.5),
            "faces_fp32": sum(len(b) for b in rb)}


# ---- M-LSD: centre scores and endpoint offsets ---------------------------

def mlsd_segments(outs, score=0.2):
    """Segments from M-LSD's outputs (offsets N x H x W x 4, scores N x H x W x
    1, already peak-filtered in the graph): every centre above score gives
    start = centre + offsets[0:2], end = centre + offsets[2:4], in pixels of
    the input (twice the output grid)."""
    offsets, scores = (np.asarray(o) for o in outs)
    s = scores.reshape(scores.shape[1], scores.shape[2])
    off = offsets.reshape(offsets.shape[1], offsets.shape[2], 4)
    segs = []
    for y, x in zip(*np.nonzero(s > score)):
        o = off[y, x]
        segs.append(tuple(2 * v for v in (x + o[0], y + o[1], x + o[2], y + o[3])))
    return segs


def lines(ref, got, tol=3.0):
    def same(a, b):
        d1 = np.hypot(a[0] - b[0], a[1] - b[1]) + np.hypot(a[2] - b[2], a[3] - b[3])
        d2 = np.hypot(a[0] - b[2], a[1] - b[3]) + np.hypot(a[2] - b[0], a[3] - b[1])
        return min(d1, d2) / 2 <= tol
    rs = [mlsd_segments(r) for r in ref]
    gs = [mlsd_segments(g) for g in got]
    return {"segment_f1": match_f1(rs, gs, same), "segments_fp32": sum(len(s) for s in rs)}


# ---- PoseNet: heatmap argmax plus offsets --------------------------------

def posenet_keypoints(outs, stride=16):
    """The single-pose decode of PoseNet (TensorFlow.js posenet's
    decodeSinglePose): for each of the 17 keypoints the heatmap's arg max
    cell, position = cell * stride + offset (y in channel k, x in k + 17),
    score = sigmoid of the heatmap there. Outputs in the ONNX model's order:
    displacement_bwd, displacement_fwd, heatmap, offset (NHWC)."""
    heat, off = np.asarray(outs[2])[0], np.asarray(outs[3])[0]
    n = heat.shape[-1]
    kps = []
    for k in range(n):
        h = heat[:, :, k]
        y, x = np.unravel_index(int(np.argmax(h)), h.shape)
        score = 1.0 / (1.0 + np.exp(-float(h[y, x])))
        kps.append((score, y * stride + float(off[y, x, k]), x * stride + float(off[y, x, k + n])))
    return kps


def pose(ref, got, score=0.5, tol=8.0):
    """PCK against FP32: of the keypoints FP32 finds (score >= 0.5), the
    share the quantized model puts within tol pixels (half the output
    stride) of FP32's; their mean distance; and how often the two agree on
    which keypoints are found."""
    hit = total = agree = n = 0
    dist = []
    for r, g in zip(ref, got):
        rk, gk = posenet_keypoints(r), posenet_keypoints(g)
        for (rs, ry, rx), (gs, gy, gx) in zip(rk, gk):
            n += 1
            agree += (rs >= score) == (gs >= score)
            if rs >= score:
                total += 1
                d = float(np.hypot(ry - gy, rx - gx))
                dist.append(d)
                hit += d <= tol
    return {"pck": hit / total if total else 1.0, "kp_err_px": float(np.mean(dist)) if dist else 0.0,
            "kp_found_agree": agree / n if n else 1.0, "keypoints_fp32": total}


# ---- FaceMesh: 468 landmarks ----------------------------------------------

def landmarks(ref, got, flag=0.5):
    """Mean landmark error against FP32 on the crops FP32 finds a face in
    (face flag >= 0.5), in pixels of the 192x192 input and normalised by
    FP32's outer-eye-corner distance (landmarks 33 and 263: NME), and how
    often the face flag agrees. Outputs in the ONNX model's order: contours
    (266), face flag (1), mesh (1404 = 468 x, y, z)."""
    errs, nmes, same = [], [], 0
    for r, g in zip(ref, got):
        rf, gf = float(np.asarray(r[1]).ravel()[0]), float(np.asarray(g[1]).ravel()[0])
        same += (rf >= flag) == (gf >= flag)
        if rf < flag:
            continue
        rm = np.asarray(r[2]).reshape(-1, 3)[:, :2]
        gm = np.asarray(g[2]).reshape(-1, 3)[:, :2]
        e = np.hypot(*(rm - gm).T)
        iod = float(np.hypot(*(rm[33] - rm[263])))
        errs.append(float(e.mean()))
        nmes.append(float(e.mean()) / iod if iod > 0 else float("inf"))
    return {"nme": float(np.mean(nmes)) if nmes else 0.0,
            "nme_max": float(np.max(nmes)) if nmes else 0.0,
            "lm_err_px": float(np.mean(errs)) if errs else 0.0,
            "faces_fp32": len(errs), "flag_agree": same / len(ref)}


# ---- embeddings: the vector itself -----------------------------------------

def embedding(ref, got):
    """Cosine of each sample's embedding with FP32's: the worst and the mean."""
    cs = []
    for r, g in zip(ref, got):
        a, b = np.asarray(r, np.float64).ravel(), np.asarray(g, np.float64).ravel()
        n = np.linalg.norm(a) * np.linalg.norm(b)
        cs.append(float(a @ b / n) if n > 0 else float("nan"))
    return {"cos_min": float(np.min(cs)), "cos_mean": float(np.mean(cs))}


# ---- wake word: the score and the decision ----------------------------------

def wakeword(ref, got, thresh=0.5):
    """The head's score (one value a clip) against FP32's: the largest
    difference, and how often the decision at thresh (openWakeWord's default)
    is the same; with FP32's detections counted."""
    r = np.array([float(np.asarray(x).ravel()[0]) for x in ref])
    g = np.array([float(np.asarray(x).ravel()[0]) for x in got])
    return {"score_diff_max": float(np.max(np.abs(r - g))) if len(r) else 0.0,
            "decision_agree": float(np.mean((r >= thresh) == (g >= thresh))) if len(r) else 1.0,
            "detections_fp32": int(np.sum(r >= thresh))}


# ---- the second set (2026-11-29) -------------------------------------------

def _nme(rp, gp, norm):
    """Mean point distance of gp from rp (N x 2) and the same over norm."""
    e = float(np.mean(np.hypot(*(np.asarray(rp) - np.asarray(gp)).T)))
    return e, (e / norm if norm > 0 else float("inf"))


def hand(ref, got, flag=0.5):
    """MediaPipe's hand landmarks (outputs in the ONNX model's order: 21
    points x, y, z in pixels of the 224x224 input, hand flag, handedness,
    21 world points). On the crops where FP32's hand flag is >= 0.5: NME,
    the mean x, y distance of the 21 points from FP32's over FP32's wrist
    (0) to middle-finger MCP (9) distance, the palm's length; the world
    points' mean distance (the model's metres, given in mm); handedness at
    0.5 agreeing. On every crop: the hand flag agreeing at 0.5."""
    nmes, errs, world, hands = [], [], [], 0
    same = 0
    for r, g in zip(ref, got):
        rf, gf = float(np.asarray(r[1]).ravel()[0]), float(np.asarray(g[1]).ravel()[0])
        same += (rf >= flag) == (gf >= flag)
        if rf < flag:
            continue
        rp = np.asarray(r[0]).reshape(21, 3)[:, :2]
        gp = np.asarray(g[0]).reshape(21, 3)[:, :2]
        e, n = _nme(rp, gp, float(np.hypot(*(rp[0] - rp[9]))))
        errs.append(e)
        nmes.append(n)
        rw = np.asarray(r[3]).reshape(21, 3)
        gw = np.asarray(g[3]).reshape(21, 3)
        world.append(float(np.mean(np.linalg.norm(rw - gw, axis=1))))
        rh, gh = float(np.asarray(r[2]).ravel()[0]), float(np.asarray(g[2]).ravel()[0])
        hands += (rh >= 0.5) == (gh >= 0.5)
    k = len(nmes)
    return {"nme": float(np.mean(nmes)) if k else 0.0,
            "nme_max": float(np.max(nmes)) if k else 0.0,
            "lm_err_px": float(np.mean(errs)) if k else 0.0,
            "world_err_mm": 1000 * float(np.mean(world)) if k else 0.0,
            "hands_fp32": k, "handed_agree": hands / k if k else 1.0,
            "flag_agree": same / len(ref)}


def iris(ref, got):
    """MediaPipe's iris model (one output: 71 eye-contour points, then 5 iris
    points, x, y, z in pixels of the 64x64 eye crop): NME, the mean x, y
    distance of the 76 points from FP32's over FP32's eye width (contour
    points 0 and 8, the eye's corners: FaceMesh's 33 and 133); the iris
    centre's (point 71) distance in pixels, mean and worst."""
    nmes, errs, centre = [], [], []
    for r, g in zip(ref, got):
        rp = np.asarray(r[0]).reshape(76, 3)[:, :2]
        gp = np.asarray(g[0]).reshape(76, 3)[:, :2]
        e, n = _nme(rp, gp, float(np.hypot(*(rp[0] - rp[8]))))
        errs.append(e)
        nmes.append(n)
        centre.append(float(np.hypot(*(rp[71] - gp[71]))))
    return {"nme": float(np.mean(nmes)), "nme_max": float(np.max(nmes)),
            "lm_err_px": float(np.mean(errs)), "iris_err_px": float(np.mean(centre)),
            "iris_err_max_px": float(np.max(centre))}


def human_age(p):
    """Human's age from faceres's 100 softmax values (faceres.ts): the arg
    max a, moved towards the larger neighbour: 10 a - 100 p[a-1] if p[a-1] >
    p[a+1] else 10 a + 100 p[a+1], rounded (half up, Math.round), over 10."""
    p = np.asarray(p, np.float64).ravel()
    a = int(np.argmax(p))
    lo = p[a - 1] if a > 0 else 0.0      # JavaScript reads undefined there: the
    hi = p[a + 1] if a < p.size - 1 else 0.0   # comparison is false, as with 0
    return float(np.floor((10 * a - 100 * lo if lo > hi else 10 * a + 100 * hi) + 0.5)) / 10


def attributes(ref, got):
    """faceres (outputs in the ONNX model's order: age softmax over 100,
    gender sigmoid, 1024-value descriptor): Human's age estimate's
    difference from FP32's in years (mean, worst) and the age arg max
    agreeing; gender at 0.5 agreeing; the descriptor's cosine with FP32's
    (worst, mean)."""
    ages, arg, gender, cs = [], 0, 0, []
    for r, g in zip(ref, got):
        ages.append(abs(human_age(r[0]) - human_age(g[0])))
        arg += int(np.argmax(r[0])) == int(np.argmax(g[0]))
        gender += (float(np.asarray(r[1]).ravel()[0]) >= 0.5) == \
            (float(np.asarray(g[1]).ravel()[0]) >= 0.5)
        a, b = np.asarray(r[2], np.float64).ravel(), np.asarray(g[2], np.float64).ravel()
        n = np.linalg.norm(a) * np.linalg.norm(b)
        cs.append(float(a @ b / n) if n > 0 else float("nan"))
    n = len(ref)
    return {"age_diff": float(np.mean(ages)), "age_diff_max": float(np.max(ages)),
            "age_argmax_agree": arg / n, "gender_agree": gender / n,
            "desc_cos_min": float(np.min(cs)), "desc_cos_mean": float(np.mean(cs))}


def score(ref, got, thresh=0.5):
    """A model with one score a sample (antispoof's real-face sigmoid): the
    largest difference from FP32's and the decision at thresh agreeing,
    with FP32's positives counted."""
    r = np.array([float(np.asarray(x).ravel()[0]) for x in ref])
    g = np.array([float(np.asarray(x).ravel()[0]) for x in got])
    return {"score_diff_max": float(np.max(np.abs(r - g))),
            "decision_agree": float(np.mean((r >= thresh) == (g >= thresh))),
            "positives_fp32": int(np.sum(r >= thresh))}


# ---- the third set (2026-11-29) --------------------------------------------

def movenet(ref, got, score=0.3, tol=4.0, side=192):
    """MoveNet SinglePose (one output, 1 x 1 x 17 x 3: y, x in [0, 1] of the
    input, score): PCK against FP32, as PoseNet's: of the keypoints FP32
    scores >= score, the share the quantized model puts within tol pixels
    of the side x side input (4 of 192: the same 2.1% of the side as
    PoseNet's 8 of 385), their mean distance; how often the two agree on
    which keypoints score >= score; the scores' largest difference."""
    hit = total = agree = n = 0
    dist, sdiff = [], 0.0
    for r, g in zip(ref, got):
        rk = np.asarray(r[0], np.float64).reshape(17, 3)
        gk = np.asarray(g[0], np.float64).reshape(17, 3)
        sdiff = max(sdiff, float(np.max(np.abs(rk[:, 2] - gk[:, 2]))))
        for (ry, rx, rs), (gy, gx, gs) in zip(rk, gk):
            n += 1
            agree += (rs >= score) == (gs >= score)
            if rs >= score:
                total += 1
                d = side * float(np.hypot(ry - gy, rx - gx))
                dist.append(d)
                hit += d <= tol
    return {"pck": hit / total if total else 1.0,
            "kp_err_px": float(np.mean(dist)) if dist else 0.0,
            "kp_err_max_px": float(np.max(dist)) if dist else 0.0,
            "kp_found_agree": agree / n if n else 1.0, "keypoints_fp32": total,
            "kp_score_diff_max": sdiff}


def nms(boxes, scores, iou, max_out, min_score):
    """tf.image.nonMaxSuppression (TensorFlow.js's CPU backend): candidates
    scoring > min_score by falling score (ties: the earlier first), each kept
    unless its IoU with a kept one is > iou, at most max_out; returns the
    kept indices."""
    order = sorted((i for i in range(len(scores)) if scores[i] > min_score),
                   key=lambda i: (-scores[i], i))
    kept = []
    for i in order:
        if len(kept) >= max_out:
            break
        if all(box_iou(boxes[i], boxes[k]) <= iou for k in kept):
            kept.append(i)
    return kept


def centernet_objects(det, min_score=0.2, iou=0.4, max_out=10):
    """Human's centernet.ts: the 100 detections (x0, y0, x1, y1 in input
    pixels, score, class) through class-agnostic NMS with Human's object
    defaults (minConfidence 0.2, iouThreshold 0.4, maxDetected 10); returns
    (class, box, score) of the kept ones."""
    d = np.asarray(det, np.float64).reshape(-1, 6)
    boxes = [tuple(b) for b in d[:, :4]]
    return [(int(d[i, 5]), boxes[i], float(d[i, 4]))
            for i in nms(boxes, list(d[:, 4]), iou, max_out, min_score)]


def objects(ref, got):
    """CenterNet against FP32: box F1 (the kit's match_f1: IoU >= 0.5, and
    the same class) of Human's detections, with FP32's counted; and how far
    the score of each FP32 detection that is matched moved."""
    rs = [centernet_objects(r[0]) for r in ref]
    gs = [centernet_objects(g[0]) for g in got]
    f1 = match_f1(rs, gs, lambda a, b: a[0] == b[0] and box_iou(a[1], b[1]) >= 0.5)
    f1_any = match_f1(rs, gs, lambda a, b: box_iou(a[1], b[1]) >= 0.5)
    return {"box_f1": f1, "box_f1_anyclass": f1_any,
            "objects_fp32": sum(len(x) for x in rs), "objects_q": sum(len(x) for x in gs)}
