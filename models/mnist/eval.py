#!/usr/bin/python3
"""Top-1 accuracy of a logits .npy against the held-out labels.

usage: eval.py LOGITS.npy [--labels test_y.npy] [--ref OTHER_LOGITS.npy]

LOGITS.npy is (N,10) (or (N,1,10)) from any runtime on test_x.npy; N must match the
labels (1000 for test_y.npy). With --ref, also prints the max abs difference from
another run's logits and how many top-1 decisions differ.
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def load_logits(path, n):
    z = np.load(path)
    if z.ndim == 3 and z.shape[1] == 1:
        z = z[:, 0]
    if z.ndim != 2 or z.shape[0] != n:
        sys.exit(f"{path}: shape {z.shape}, expected ({n}, classes)")
    return z.astype(np.float64)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("logits")
    ap.add_argument("--labels", default=os.path.join(HERE, "test_y.npy"))
    ap.add_argument("--ref", help="other logits to compare with")
    a = ap.parse_args()

    y = np.load(a.labels)
    z = load_logits(a.logits, len(y))
    if not np.all(np.isfinite(z)):
        sys.exit(f"{a.logits}: contains NaN or Inf")
    pred = z.argmax(1)
    correct = int((pred == y).sum())
    print(f"top-1 {correct / len(y):.4f} ({correct}/{len(y)})")
    if a.ref:
        r = load_logits(a.ref, len(y))
        diff = np.abs(z - r).max()
        changed = int((r.argmax(1) != pred).sum())
        print(f"vs {a.ref}: max abs diff {diff:.3g}, top-1 changed on {changed} of {len(y)}")


if __name__ == "__main__":
    main()
