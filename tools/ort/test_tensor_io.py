#!/usr/bin/python3
"""Self-test of tools/ort/tensor_io.js: .npy files written by numpy in every
supported dtype (both byte orders, header versions 1 and 2, 0-d, 1-d, empty,
Fortran-order vectors) and .pb files written by onnx are read by the JS code
and written back as .npy; numpy must read back the same dtype, shape and
bytes. Also checks that bad files fail with a message. Exit 0 when all pass."""

import os
import subprocess
import sys
import tempfile

import numpy as np
from numpy.lib import format as npf

HERE = os.path.dirname(os.path.abspath(__file__))
JS = r"""
const io = require(process.argv[1]);
const [src, dst] = process.argv.slice(2);
try {
  io.writeNpy(dst, io.readTensor(src));
} catch (e) {
  process.stderr.write(e.message + '\n');
  process.exit(3);
}
"""


def roundtrip(src, dst):
    return subprocess.run(["node", "-e", JS, os.path.join(HERE, "tensor_io.js"), src, dst],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def main():
    rng = np.random.default_rng(0)
    cases = []
    for dt in ["<f4", ">f4", "<f8", ">f8", "<f2", "<i8", ">i8", "<u8", "<i4", ">i4", "<u4",
               "<i2", "<u2", "|i1", "|u1", "|b1"]:
        for shape in [(2, 3, 5), (7,), (), (0, 4), (1, 1, 13)]:
            a = rng.standard_normal(shape) * 100
            if dt == "|b1":
                a = a > 0
            cases.append((f"{dt}{shape}", a.astype(np.dtype(dt))))
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        def check(label, path, want):
            nonlocal fails
            out = os.path.join(tmp, "out.npy")
            p = roundtrip(path, out)
            if p.returncode != 0:
                fails += 1
                print(f"FAIL {label}: {p.stderr.strip()}")
                return
            got = np.load(out)
            want_le = want.astype(want.dtype.newbyteorder("<")) if want.dtype.byteorder == ">" \
                else want
            if got.dtype != want_le.dtype or got.shape != want.shape or \
                    got.tobytes() != np.ascontiguousarray(want_le).tobytes():
                fails += 1
                print(f"FAIL {label}: got {got.dtype}{got.shape}, want {want_le.dtype}{want.shape}")
        for label, a in cases:
            p = os.path.join(tmp, "in.npy")
            np.save(p, a)
            check(label + " npy v1", p, a)
        # Header version 2, Fortran-order vector.
        a = rng.standard_normal((3, 4)).astype(np.float32)
        p = os.path.join(tmp, "v2.npy")
        with open(p, "wb") as f:
            npf.write_array(f, a, version=(2, 0))
        check("npy v2", p, a)
        v = np.asfortranarray(rng.standard_normal(6).astype(np.float32))
        p = os.path.join(tmp, "fv.npy")
        with open(p, "wb") as f:
            npf.write_array(f, v)
        check("fortran 1-d", p, v)
        # TensorProto .pb, raw_data and typed fields.
        import onnx
        from onnx import numpy_helper, helper, TensorProto
        for dt in [np.float32, np.float64, np.int64, np.int32, np.uint8, np.int8, np.bool_,
                   np.int16, np.uint16, np.float16, np.uint32, np.uint64]:
            a = (rng.standard_normal((2, 3)) * 50).astype(dt)
            p = os.path.join(tmp, "t.pb")
            with open(p, "wb") as f:
                f.write(numpy_helper.from_array(a, "t").SerializeToString())
            check(f"pb raw {np.dtype(dt)}", p, a)
        for dt, tp, field in [(np.float32, TensorProto.FLOAT, "float_data"),
                              (np.int64, TensorProto.INT64, "int64_data"),
                              (np.int32, TensorProto.INT32, "int32_data"),
                              (np.float64, TensorProto.DOUBLE, "double_data"),
                              (np.int8, TensorProto.INT8, "int32_data"),
                              (np.bool_, TensorProto.BOOL, "int32_data")]:
            a = (rng.standard_normal((3, 2)) * 50).astype(dt)
            t = helper.make_tensor("t", tp, a.shape, a.flatten().tolist())
            assert len(getattr(t, field)) == a.size
            p = os.path.join(tmp, "t.pb")
            with open(p, "wb") as f:
                f.write(t.SerializeToString())
            check(f"pb {field} {np.dtype(dt)}", p, a)
        a = np.array([-(2 ** 62), -1, 2 ** 40], dtype=np.int64)  # negative varints
        t = helper.make_tensor("t", TensorProto.INT64, a.shape, a.tolist())
        p = os.path.join(tmp, "neg.pb")
        with open(p, "wb") as f:
            f.write(t.SerializeToString())
        check("pb int64_data negative", p, a)
        # Bad files must fail cleanly with a message naming the file.
        bad = {"trunc.npy": None, "garbage.pb": b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
               "short.npy": None}
        good = os.path.join(tmp, "good.npy")
        np.save(good, np.zeros((10, 10), np.float32))
        raw = open(good, "rb").read()
        bad["trunc.npy"] = raw[:-8]
        bad["short.npy"] = raw[:20]
        for name, data in bad.items():
            p = os.path.join(tmp, name)
            with open(p, "wb") as f:
                f.write(data)
            r = roundtrip(p, os.path.join(tmp, "x.npy"))
            if r.returncode != 3 or name not in r.stderr:
                fails += 1
                print(f"FAIL bad file {name}: rc {r.returncode}, {r.stderr.strip()!r}")
            else:
                print(f"ok   bad file {name}: {r.stderr.strip()}")
    total = len(cases) + 2 + 12 + 6 + 1 + 3
    print(f"{total - fails}/{total} tensor I/O checks passed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
