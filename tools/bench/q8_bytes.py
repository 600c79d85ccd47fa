#!/usr/bin/python3
"""Where the bytes of a .q8 file go (docs/format.md), per section and per
kind of record.

  q8_bytes.py [--table] FILE.q8 [ONNX]...   (a .q8, optionally its .onnx)

GRAPH (versions 2 to 7; a deflated META or GRAPH of version 5 to 7 is counted
inflated, its stored bytes in "META+GRAPH stored"): tensor names, node names,
dims, fixed tensor fields, quantization scales, data references, node records (op, indices),
attributes (version 4: the attribute table, and the nodes' references).
DATA: int8 weights by layout (their layout padding apart), int32 data,
float32 constants (all-zero ones apart), other dtypes, bitmask-encoded data,
deflated data (version 8), alignment padding (other dtypes counted with it in --table). Plus the
header/table and the gaps before sections (DATA's page alignment). With
--table, one markdown row per file; else a few lines each.
"""
import os
import struct
import sys
import zlib

DTYPE_SIZE = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8, 16: 2}


class R:
    def __init__(self, b):
        self.b, self.i = b, 0

    def take(self, n):
        v = self.b[self.i:self.i + n]
        self.i += n
        return v

    def u(self, fmt):
        v = struct.unpack_from("<" + fmt, self.b, self.i)[0]
        self.i += struct.calcsize(fmt)
        return v

    def s(self):
        n = self.u("I")
        return self.take(n).decode()

    def uv(self):
        v, sh = 0, 0
        while True:
            b = self.b[self.i]
            self.i += 1
            v |= (b & 0x7f) << sh
            sh += 7
            if not b & 0x80:
                return v

    def sv(self):
        u = self.uv()
        return (u >> 1) ^ -(u & 1)

    def vs(self):
        return self.take(self.uv())

    def fs(self):
        self.uv()
        return self.vs()


def attr4(r, c):
    st = r.i
    r.vs()
    c["attr names"] += r.i - st
    st = r.i
    t = r.u("B")
    if t == 1:
        r.take(4)
    elif t == 2:
        r.sv()
    elif t == 3:
        r.vs()
    elif t == 6:
        r.take(4 * r.uv())
    elif t == 7:
        for _ in range(r.uv()):
            r.sv()
    elif t == 8:
        for _ in range(r.uv()):
            r.vs()
    elif t == 4:
        r.u("B")
        nd = r.u("B")
        for _ in range(nd):
            r.sv()
        r.take(r.uv())
    c["attr values"] += r.i - st


def graph4(g, data, c, dk):
    """Version 4 (docs/format.md, "Version 4: compact records")."""
    r = R(g)
    for _ in range(r.uv()):
        attr4(r, c)
    consts = []
    st = r.i
    nt = r.uv()
    c["node records"] += r.i - st
    for _ in range(nt):
        st = r.i
        r.fs()
        c["tensor names"] += r.i - st
        st = r.i
        dt, nd, fl = r.u("B"), r.u("B"), r.u("B")
        enc = lay = 0
        if fl & 1:
            enc, lay = r.u("B"), r.u("B")
        c["tensor fixed fields"] += r.i - st
        st = r.i
        dims = [r.sv() for _ in range(nd)]
        c["dims"] += r.i - st
        if fl & 2:
            st = r.i
            ax = r.sv()
            es = 4
            if fl & 16:  # version 7: a base exponent, then 16-bit scales
                r.uv()
                es = 2
            r.take(es * (1 if ax < 0 else dims[ax]))
            r.sv()
            c["scales (qparams)"] += r.i - st
        if fl & 1:
            st = r.i
            off, size = r.uv(), r.uv()
            c["data refs"] += r.i - st
            consts.append((off, size, dt, dims, enc, lay))
    st = r.i
    nn = r.uv()
    c["node records"] += r.i - st
    for _ in range(nn):
        st = r.i
        r.fs()
        c["node names"] += r.i - st
        st = r.i
        r.uv()
        for _ in range(r.uv()):
            r.uv()
        for _ in range(r.uv()):
            r.uv()
        for _ in range(r.uv()):
            r.uv()
        c["node records"] += r.i - st
    c["node records"] += len(g) - r.i  # the graph's inputs and outputs
    data_kinds(consts, data, dk)


def attr(r, c):
    st = r.i
    r.s()
    c["attr names"] += r.i - st
    st = r.i
    t = r.u("B")
    if t == 1:
        r.take(4)
    elif t == 2:
        r.take(8)
    elif t == 3:
        r.s()
    elif t in (6, 7):
        n = r.u("I")
        r.take(n * (4 if t == 6 else 8))
    elif t == 8:
        for _ in range(r.u("I")):
            r.s()
    elif t == 4:
        r.u("B")
        nd = r.u("B")
        r.take(8 * nd)
        r.take(r.u("Q"))
    c["attr values"] += r.i - st


def graph(g, ver, data, c, dk):
    r = R(g)
    consts = []
    for _ in range(r.u("I")):
        st = r.i
        r.s()
        c["tensor names"] += r.i - st
        dt, nd, fl, enc = r.u("B"), r.u("B"), r.u("B"), r.u("B")
        lay = r.u("B") if ver >= 3 else 0
        c["tensor fixed fields"] += 4 + (ver >= 3) + 4 * 0
        dims = [r.u("q") for _ in range(nd)]
        c["dims"] += 8 * nd
        if fl & 2:
            st = r.i
            r.u("i")
            n = r.u("I")
            r.take(4 * n)
            r.u("i")
            c["scales (qparams)"] += r.i - st
        if fl & 1:
            off, size = r.u("Q"), r.u("Q")
            c["data refs"] += 16
            consts.append((off, size, dt, dims, enc, lay))
    nn = r.u("I")
    c["node records"] += 4
    for _ in range(nn):
        st = r.i
        r.s()
        c["node names"] += r.i - st
        st = r.i
        r.u("H")
        r.take(4 * r.u("I"))
        r.take(4 * r.u("I"))
        r.u("I")
        c["node records"] += r.i - st
        # attribute count read above; re-read it
        r.i -= 4
        na = r.u("I")
        for _ in range(na):
            attr(r, c)
    st = r.i
    r.take(4 * r.u("I"))
    r.take(4 * r.u("I"))
    c["node records"] += r.i - st + 4  # + the tensor count
    data_kinds(consts, data, dk)


def data_kinds(consts, data, dk):
    used = 0
    for off, size, dt, dims, enc, lay in sorted(consts):
        numel = 1
        for d in dims:
            numel *= d
        dense = numel * DTYPE_SIZE.get(dt, 1)
        if enc == 2:
            dk["bitmask data"] += size
        elif enc == 5:
            dk["deflated data"] += size
        elif lay:
            dk["int8 weights"] += dense
            dk["layout padding"] += size - dense
        elif dt == 3:
            dk["int8 weights"] += size
        elif dt == 6:
            dk["int32 data"] += size
        elif dt == 1:
            zero = not any(data[off:off + size])
            dk["fp32 zero constants" if zero else "fp32 constants"] += size
        else:
            dk["other dtypes"] += size
        used += size
    dk["alignment padding"] += len(data) - used


def main():
    args = sys.argv[1:]
    table = "--table" in args
    args = [a for a in args if a != "--table"]
    rows = []
    while args:
        q8 = args.pop(0)
        onnx = args.pop(0) if args and args[0].endswith(".onnx") else None
        b = open(q8, "rb").read()
        ver, nsec, toff = struct.unpack_from("<I", b, 8)[0], struct.unpack_from("<I", b, 32)[0], \
            struct.unpack_from("<Q", b, 24)[0]
        secs, sect = {}, {}
        for i in range(nsec):
            kind, flags, off, size, _, inflated = struct.unpack_from("<IIQQII", b, toff + 32 * i)
            secs[kind] = (off, size)
            raw = b[off:off + size]
            # version 5: a deflated META or GRAPH (flag 1) is counted inflated
            sect[kind] = zlib.decompress(raw) if ver >= 5 and flags & 1 else raw
        c = {k: 0 for k in ["tensor names", "node names", "dims", "tensor fixed fields",
                            "scales (qparams)", "data refs", "node records", "attr names",
                            "attr values"]}
        dk = {k: 0 for k in ["int8 weights", "layout padding", "int32 data", "fp32 constants",
                             "fp32 zero constants", "other dtypes", "bitmask data",
                             "deflated data", "alignment padding"]}
        gs, ds = len(sect[2]), secs[4][1]
        data = sect[4]
        if ver <= 3:
            graph(sect[2], ver, data, c, dk)
        else:
            graph4(sect[2], data, c, dk)
        gaps = len(b) - sum(s for _, s in secs.values())
        stored = secs[1][1] + secs[2][1]
        rows.append((q8, ver, len(b), onnx, len(sect[1]), gs, ds, gaps, c, dk, stored))
    if table:
        print("| model | v | file | ONNX x | header+gaps | META | names | dims+fields+refs "
              "| scales | nodes+attrs | META+GRAPH stored | int8 | layout pad | int32 | fp32 "
              "| bitmask | deflated "
              "| align pad |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:"
              "|---:|---:|")
    for q8, ver, size, onnx, ms, gs, ds, gaps, c, dk, stored in rows:
        name = os.path.basename(q8)
        ob = os.path.getsize(onnx) if onnx else 0
        if table:
            cells = [gaps, ms, c["tensor names"] + c["node names"],
                     c["dims"] + c["tensor fixed fields"] + c["data refs"], c["scales (qparams)"],
                     c["node records"] + c["attr names"] + c["attr values"], stored,
                     dk["int8 weights"],
                     dk["layout padding"], dk["int32 data"],
                     dk["fp32 constants"] + dk["fp32 zero constants"],
                     dk["bitmask data"], dk["deflated data"],
                     dk["alignment padding"] + dk["other dtypes"]]
            ratio = f"{size / ob:.3f}" if ob else "-"
            print(f"| {name[:-3]} | {ver} | {size} | {ratio} | "
                  + " | ".join(map(str, cells)) + " |")
            continue
        print(f"## {name}: {size} bytes" + (f" = {size / ob:.3f}x of {ob}" if ob else ""))
        print(f"- header, table, gaps (DATA page alignment): {gaps}; META {ms}; GRAPH {gs}; "
              f"DATA {ds}; META+GRAPH as stored (deflated in version 5) {stored}")
        print("- GRAPH: " + "; ".join(f"{k} {v}" for k, v in c.items()))
        print("- DATA: " + "; ".join(f"{k} {v}" for k, v in dk.items()))


if __name__ == "__main__":
    main()
