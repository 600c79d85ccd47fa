#!/usr/bin/env python3
"""The layering of docs/architecture.md, checked on the source: which folder
may include headers of which. A folder includes another when one of its
files has `#include "x.h"` and x.h lives there (headers are found by name:
every header name is unique in the tree). Exit 1 and name every include
that breaks a rule, or a folder loop.

    python3 tools/check/layers.py [ROOT]
"""
import os
import re
import sys

# folder -> the folders it may include (itself always)
ALLOWED = {
    "src/include": set(),
    "src/core": {"src/include"},
    "formats/q8": {"src/include", "src/core"},
    "kernels/common": {"src/include", "src/core"},
    "kernels/cpu": {"src/include", "src/core", "kernels/common"},
    "kernels/cuda": {"src/include", "src/core", "kernels/common"},
    "src/passes": {"src/include", "src/core"},
    "formats/onnx": {"src/include", "src/core", "src/passes", "formats/q8"},
    "formats/tensor": {"src/include", "src/core", "formats/onnx"},
    "src/report": {"src/include", "src/core", "src/passes", "formats/q8", "formats/onnx",
                   "formats/tensor"},
    "src/quant": {"src/include", "src/core", "src/passes", "formats/q8", "formats/onnx",
                  "formats/tensor", "src/report"},
    "tools": {"src/include"},
}
# sub-folders belong to their parent (kernels/cpu/x86 is kernels/cpu)
def folder_of(path):
    for f in sorted(ALLOWED, key=len, reverse=True):
        if path == f or path.startswith(f + "/"):
            return f
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "../.."))
    headers = {}
    files = []
    for top in ("src", "formats", "kernels", "tools"):
        for d, _, fs in os.walk(os.path.join(root, top)):
            rel = os.path.relpath(d, root)
            if rel.startswith("tools/") and not rel.startswith("tools/check"):
                continue  # scripts and benchmarks, not the tools' C sources
            for f in fs:
                p = os.path.join(rel, f)
                if (f.endswith(".h") or f.endswith(".cuh")) and not rel.startswith("src/core/ops"):
                    if f in headers and headers[f] != rel:
                        print(f"header name {f} in both {headers[f]} and {rel}")
                        return 1
                    headers[f] = rel
                if f.endswith((".c", ".h", ".cu", ".cuh")):
                    files.append(p)
    bad = 0
    edges = {}
    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
    for p in files:
        src = folder_of(os.path.dirname(p))
        if src is None:
            continue
        text = open(os.path.join(root, p), errors="replace").read()
        for name in inc.findall(text):
            base = os.path.basename(name)
            if name.startswith("ops/"):
                target = "src/core"  # the core's op params: src/core/ops/
            elif base in headers:
                target = folder_of(headers[base])
            else:
                continue  # generated (onnx.pb-c.h) or relative (../docs/examples)
            if target is None or target == src:
                continue
            edges.setdefault(src, set()).add(target)
            if target not in ALLOWED[src]:
                print(f"{p}: includes {name} from {target}, which {src} may not use")
                bad += 1
    # loops between folders
    def reach(a, seen):
        for b in edges.get(a, ()):
            if b not in seen:
                seen.add(b)
                reach(b, seen)
        return seen
    for a in edges:
        if a in reach(a, set()):
            print(f"folder loop through {a}")
            bad += 1
    if bad:
        print(f"{bad} layering violation(s); see docs/architecture.md")
        return 1
    print(f"layers: {len(files)} files, {sum(len(v) for v in edges.values())} folder edges, no violation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
