"""Shared constants and helpers for the MNIST models (data layout, normalization)."""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA_DIR = os.path.join(HERE, "data")          # git-ignored cache (training split)
TRAIN_NPZ = os.path.join(DATA_DIR, "train.npz")

# The usual MNIST normalization (mean/std of the 60k training pixels in [0,1]).
# Every model takes x = (pixel/255 - MEAN) / STD, float32, NCHW (N,1,28,28).
MEAN = 0.1307
STD = 0.3081

N_TEST = 1000
N_CALIB = 64
SPLIT_SEED = 20240611   # numpy RandomState (legacy, stream-stable across numpy versions)


def normalize_u8(u8):
    """uint8 (...,28,28) pixels -> float32 normalized, computed in float32."""
    x = u8.astype(np.float32) / np.float32(255.0)
    return (x - np.float32(MEAN)) / np.float32(STD)


def load_train():
    if not os.path.exists(TRAIN_NPZ):
        raise SystemExit(f"{TRAIN_NPZ} missing: run models/mnist/prepare_data.sh first")
    z = np.load(TRAIN_NPZ)
    return z["images"], z["labels"]


def load_test():
    x = np.load(os.path.join(HERE, "test_x.npy"))
    y = np.load(os.path.join(HERE, "test_y.npy"))
    return x, y
