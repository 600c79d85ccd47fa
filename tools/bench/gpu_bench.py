#!/usr/bin/env python3
"""GPU benchmark: q8 INT8 (CUDA backend) against PyTorch FP32 / FP16 (eager and
CUDA graph) and onnxruntime, on ResNet-50 and a BERT-base encoder (random
weights, made and exported to ONNX on the machine itself), batch 1 and 32;
plus INT8 GEMM throughput (q8's cuBLASLt call vs torch._int_mm vs FP16).

    python3 tools/bench/gpu_bench.py --bundle BUNDLE --out OUT [--budget SECONDS]
        [--models resnet50,bert] [--batches 1,32] [--profile]

Normally started by tools/bench/gpu_bench.sh. BUNDLE is a folder made by
../shared/tools/device-bundle holding bin/q8run, bin/quantize and
bin/gpu_igemm_bench (built elsewhere with -DQ8_CUDA=ON; see docs/cuda.md).
Nothing is built or downloaded here. q8's programs run with the bundle's
libraries (Q8_LIBPATH) in their own environment only; this process, PyTorch's,
keeps its own. Writes OUT/gpu_results.json and OUT/gpu_results.md after every
step (and prints the table last). Each step is skipped, with the reason
recorded, when it fails or when the time budget runs out.

Timing, the same way for every runner: "compute" is the device time of one
inference, inputs already on the device (CUDA events around the forward for
PyTorch; events around the kernels of a run for q8, q8run's
device_median_ms); "end to end" is host input to host output by wall clock
(PyTorch: copy in, forward, copy out, synchronize; q8: q8_session_run, which
copies in and out of pinned staging). --profile also runs q8run --profile at
the largest batch and records where q8's time goes.

--smoke runs the whole flow on tiny models with the CUDA backend emulated on the
host (Q8_CUDA_EMULATE=1) and PyTorch on the CPU: a check of the script itself
on a machine without a GPU; its numbers mean nothing.
"""

import argparse
import copy
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

T0 = time.time()
RESULTS = {"steps": {}, "models": {}, "int8_gemm": {}}


def log(*a):
    print(f"[{time.time() - T0:6.1f}s]", *a, flush=True)


def left(args):
    return args.budget - (time.time() - T0)


ARGS = None


def step(name, fn, *a, **kw):
    """Run one step; record ok / the error, never raise; save the results."""
    t = time.time()
    try:
        r = fn(*a, **kw)
        RESULTS["steps"][name] = {"ok": True, "s": round(time.time() - t, 1)}
        return r
    except BaseException as e:  # noqa: BLE001 - a benchmark keeps going (exporters raise anything)
        if isinstance(e, KeyboardInterrupt):
            raise
        msg = f"{type(e).__name__}: {e}"
        RESULTS["steps"][name] = {"ok": False, "s": round(time.time() - t, 1), "error": msg[-800:]}
        log(f"step {name} failed: {msg[-400:]}")
        traceback.print_exc(limit=3)
        return None
    finally:
        if ARGS is not None:
            save(ARGS)


def q8_env(extra=None):
    """The environment for q8's programs: the bundle's libraries first."""
    env = dict(os.environ)
    lp = os.environ.get("Q8_LIBPATH", "")
    if lp:
        env["LD_LIBRARY_PATH"] = lp + ":" + env.get("LD_LIBRARY_PATH", "")
    env.update(extra or {})
    return env


def save(args):
    """Results so far, after every step: an overrun loses nothing measured."""
    RESULTS["elapsed_s"] = round(time.time() - T0, 1)
    with open(os.path.join(args.out, "gpu_results.json"), "w") as f:
        json.dump(RESULTS, f, indent=1, default=str)
    with open(os.path.join(args.out, "gpu_results.md"), "w") as f:
        f.write(report(args) + "\n")


def run(cmd, timeout, env=None):
    log("$", " ".join(cmd))
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"{os.path.basename(cmd[0])} exited {p.returncode}: "
                           f"{(p.stderr or p.stdout).strip()[-600:]}")
    return p.stdout


# ---------------------------------------------------------------- models

def make_resnet50(torch, smoke):
    import torchvision
    torch.manual_seed(0)
    m = torchvision.models.resnet18() if smoke else torchvision.models.resnet50()
    # BatchNorm statistics from a few random batches (as after training), so
    # that activations keep a sane scale through the depth.
    m.train()
    with torch.no_grad():
        for _ in range(3):
            m(torch.randn(8, 3, 64 if smoke else 224, 64 if smoke else 224))
    m.eval()
    shape = (3, 64, 64) if smoke else (3, 224, 224)
    return m, "input", shape, "float"


def make_bert(torch, smoke, transformers=True):
    """transformers' BertModel (BERT-base config, random weights) if it can be
    built; else (or with transformers=False) the same architecture written
    with plain torch modules."""
    nn = torch.nn
    torch.manual_seed(0)
    seq, layers, d, heads, ff, vocab = (16, 2, 64, 4, 128, 1000) if smoke else (128, 12, 768, 12, 3072, 30522)
    if not smoke and transformers:
        try:
            from transformers import BertConfig, BertModel
            cfg = BertConfig()
            try:
                cfg._attn_implementation = "eager"
            except Exception:  # noqa: BLE001
                pass
            bm = BertModel(cfg, add_pooling_layer=False).eval()

            class Wrap(nn.Module):
                def __init__(self, m):
                    super().__init__()
                    self.m = m

                def forward(self, ids):
                    return self.m(input_ids=ids).last_hidden_state

            RESULTS["bert_source"] = "transformers BertModel (BertConfig(), eager attention, random weights)"
            return Wrap(bm), "input_ids", (seq,), ("int", vocab), "transformers"
        except Exception as e:  # noqa: BLE001
            RESULTS["bert_transformers_error"] = f"{type(e).__name__}: {e}"[-400:]

    class Layer(nn.Module):  # post-norm, like BERT
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
            self.ln1, self.ln2 = nn.LayerNorm(d, eps=1e-12), nn.LayerNorm(d, eps=1e-12)
            self.f1, self.f2 = nn.Linear(d, ff), nn.Linear(ff, d)

        def forward(self, x):
            b, s, _ = x.shape
            h = d // heads

            def split(t):
                return t.reshape(b, s, heads, h).transpose(1, 2)

            q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
            a = torch.softmax(q @ k.transpose(-1, -2) / (h ** 0.5), dim=-1) @ v
            x = self.ln1(x + self.o(a.transpose(1, 2).reshape(b, s, d)))
            return self.ln2(x + self.f2(torch.nn.functional.gelu(self.f1(x))))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq, d)
            self.ln = nn.LayerNorm(d, eps=1e-12)
            self.layers = nn.ModuleList(Layer() for _ in range(layers))

        def forward(self, ids):
            pos = torch.arange(ids.shape[1], device=ids.device)
            x = self.ln(self.tok(ids) + self.pos(pos))
            for layer in self.layers:
                x = layer(x)
            return x

    RESULTS["bert_source"] = (f"hand-built BERT-base-like encoder ({layers} layers, d {d}, "
                              f"{heads} heads, FFN {ff}, seq {seq}), random weights")
    return Encoder().eval(), "input_ids", (seq,), ("int", vocab), "hand-built"


def export_onnx(torch, model, path, in_name, example):
    """The TorchScript exporter first (plain ONNX ops), then the dynamo one
    (torch 2.9+ makes it the default; needs onnxscript); the first error is
    kept in RESULTS if both fail."""
    kw = dict(input_names=[in_name], output_names=["output"], opset_version=17,
              do_constant_folding=True)
    dyn = {in_name: {0: "batch"}, "output": {0: "batch"}}
    errors = []
    with torch.no_grad():
        for how in ("torchscript", "dynamo"):
            try:
                if how == "torchscript":
                    try:
                        torch.onnx.export(model, (example,), path, dynamo=False, dynamic_axes=dyn, **kw)
                    except TypeError:  # torch < 2.5 has no dynamo argument
                        torch.onnx.export(model, (example,), path, dynamic_axes=dyn, **kw)
                else:
                    torch.onnx.export(model, (example,), path, dynamo=True, external_data=False,
                                      dynamic_shapes=({0: torch.export.Dim("batch")},), **kw)
                RESULTS.setdefault("exporters", {})[os.path.basename(path)] = how
                return
            except BaseException as e:  # noqa: BLE001
                if isinstance(e, KeyboardInterrupt):
                    raise
                errors.append(f"{how}: {type(e).__name__}: {e}"[-500:])
    raise RuntimeError("ONNX export failed: " + " | ".join(errors))


def sample(kind, shape, batch, rng):
    if kind == "float":
        return rng.standard_normal((batch,) + tuple(shape)).astype(np.float32)
    return rng.integers(0, kind[1], size=(batch,) + tuple(shape), dtype=np.int64)


# ---------------------------------------------------------------- timing

def torch_time(torch, fn, runs, cuda):
    """Median and min ms of fn, device time by CUDA events when cuda."""
    if cuda:
        torch.cuda.synchronize()
        ts = []
        for _ in range(runs):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            fn()
            e1.record()
            e1.synchronize()
            ts.append(e0.elapsed_time(e1))
    else:
        ts = []
        for _ in range(runs):
            t = time.perf_counter()
            fn()
            ts.append((time.perf_counter() - t) * 1e3)
    return float(np.median(ts)), float(np.min(ts))


def bench_torch(torch, model, x, runs, cuda, half, graph):
    dev = "cuda" if cuda else "cpu"
    r = {}
    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        free0 = torch.cuda.mem_get_info()[0]
    # FP16 on a copy: converting the model itself back and forth would round
    # its FP32 weights
    m = (copy.deepcopy(model).half() if half else model).to(dev)
    xi = x.to(dev)
    if half and xi.is_floating_point():
        xi = xi.half()
    # end to end: a pinned host input copied in, the forward, the output
    # copied out (q8's runs copy through pinned staging the same way)
    xh = x.clone()
    if half and xh.is_floating_point():
        xh = xh.half()
    if cuda:
        xh = xh.pin_memory()
    with torch.inference_mode():
        if graph:
            static_in = xi.clone()
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    m(static_in)
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                out = m(static_in)

            def fn():
                g.replay()

            def e2e():
                static_in.copy_(xh, non_blocking=True)
                g.replay()
                return out.to("cpu")
        else:
            def fn():
                return m(xi)

            def e2e():
                return m(xh.to(dev, non_blocking=True)).to("cpu")
            for _ in range(3):
                out = fn()
        med, mn = torch_time(torch, fn, runs, cuda)
        if cuda:
            for _ in range(3):
                e2e()
            ts = []
            for _ in range(runs):
                t = time.perf_counter()
                e2e()
                torch.cuda.synchronize()
                ts.append((time.perf_counter() - t) * 1e3)
            r["e2e_median_ms"] = float(np.median(ts))
        if not graph:
            out = fn()
    r.update(median_ms=med, min_ms=mn, runs=runs)
    if cuda:
        torch.cuda.synchronize()
        r["peak_allocated_bytes"] = int(torch.cuda.max_memory_allocated())
        r["device_delta_bytes"] = int(free0 - torch.cuda.mem_get_info()[0])
    y = out.float().cpu().numpy()
    model.cpu()
    del m, xi, out
    if cuda:
        torch.cuda.empty_cache()
    return r, y


def q8_bench(args, q8, x_path, in_name, runs, env):
    """q8run's compute time (device_median_ms, events around the kernels) as
    median_ms, like PyTorch's; its wall clock per run as e2e_median_ms."""
    out = run([os.path.join(args.bundle, "bin", "q8run"), q8, "--input", f"{in_name}={x_path}",
               "--device", "cuda", "--bench", str(runs), "--json"], timeout=max(30, left(args)), env=env)
    r = json.loads(out.strip().splitlines()[-1])
    r["e2e_median_ms"] = r["median_ms"]
    if r.get("device_median_ms") is not None:
        r["median_ms"], r["min_ms"] = r["device_median_ms"], r["device_min_ms"]
    return r


def q8_profile(args, q8, x_path, in_name, env):
    """Where q8's time goes: q8run --profile (eager, events per node)."""
    p = subprocess.run([os.path.join(args.bundle, "bin", "q8run"), q8, "--input",
                        f"{in_name}={x_path}", "--device", "cuda", "--bench", "10", "--profile"],
                       capture_output=True, text=True, timeout=max(30, left(args)), env=env)
    if p.returncode != 0:
        raise RuntimeError(f"q8run --profile exited {p.returncode}: {p.stderr.strip()[-400:]}")
    return [ln for ln in p.stderr.splitlines() if ln.strip()][:40]


def q8_output(args, q8, x_path, in_name, env):
    d = tempfile.mkdtemp(dir=args.work)
    run([os.path.join(args.bundle, "bin", "q8run"), q8, "--input", f"{in_name}={x_path}", "--device",
         "cuda", "--out", d], timeout=max(30, left(args)), env=env)
    return np.load(os.path.join(d, "output.npy"))


def agreement(ref, y, classify):
    a, b = ref.reshape(ref.shape[0], -1).astype(np.float64), y.reshape(y.shape[0], -1).astype(np.float64)
    cos = float(np.mean(np.sum(a * b, 1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1) + 1e-30)))
    r = {"cosine_vs_torch_fp32": round(cos, 6),
         "max_abs_diff": float(np.max(np.abs(a - b))), "ref_max_abs": float(np.max(np.abs(a)))}
    if classify:
        r["top1_agreement"] = float(np.mean(np.argmax(a, 1) == np.argmax(b, 1)))
    return r


def bench_bert(args, torch, ort, name, maker):
    """transformers' BertModel first; if it does not export, or q8 cannot
    quantize or run it, the hand-built equivalent (all runners re-measured on
    it, so that every number compares the same model)."""
    try:
        bench_model(args, torch, ort, name, maker)
    except Exception as e:  # noqa: BLE001
        RESULTS["bert_transformers_error"] = f"{type(e).__name__}: {e}"[-600:]
    r = RESULTS["models"].get(name, {})
    ok = any(isinstance(v, dict) and "q8_int8" in v for v in r.values())
    if ok or RESULTS.get("bert_source", "").startswith("hand-built") or left(args) < 120:
        return
    log("bert: q8 could not run the transformers model; the hand-built encoder instead")
    RESULTS["models"]["bert_transformers_attempt"] = RESULTS["models"].pop(name, {})
    bench_model(args, torch, ort, name, lambda t, sm: make_bert(t, sm, transformers=False))


def bench_model(args, torch, ort, name, maker):
    smoke = args.smoke
    cuda = not smoke
    made = maker(torch, smoke)
    model, in_name, shape, kind = made[:4]
    res = RESULTS["models"].setdefault(name, {})
    res["source"] = RESULTS.get("bert_source") if name == "bert" else \
        ("torchvision resnet18 (smoke)" if smoke else "torchvision resnet50, random weights, BN statistics settled on random batches")
    wd = os.path.join(args.work, name)
    os.makedirs(os.path.join(wd, "calib"), exist_ok=True)
    rng = np.random.default_rng(0)
    onnx_path = os.path.join(wd, f"{name}.onnx")
    ex = torch.from_numpy(sample(kind, shape, 1, rng))
    log(f"{name}: exporting ONNX")
    export_onnx(torch, model, onnx_path, in_name, ex)
    res["onnx_bytes"] = os.path.getsize(onnx_path)
    for i in range(args.calib):
        np.save(os.path.join(wd, "calib", f"s{i:02d}.npy"), sample(kind, shape, 1, rng))
    env = q8_env({"Q8_CUDA_EMULATE": "1"} if smoke else None)
    for b in args.batches:
        if left(args) < 30:
            res[f"b{b}"] = {"skipped": "time budget"}
            continue
        rb = res.setdefault(f"b{b}", {})
        q8 = os.path.join(wd, f"{name}_b{b}.q8")
        dims = "x".join(str(v) for v in (b,) + tuple(shape))
        t = time.time()
        out = step(f"{name}_b{b}_quantize", run,
                   [os.path.join(args.bundle, "bin", "quantize"), onnx_path, "-o", q8, "--calib",
                    os.path.join(wd, "calib"), "--input-shape", f"{in_name}={dims}"],
                   timeout=max(30, left(args)), env=env)
        if out is not None:
            rb["quantize"] = {"s": round(time.time() - t, 1), "q8_bytes": os.path.getsize(q8),
                              "log": out.strip().splitlines()[-1][-300:] if out.strip() else ""}
        x = sample(kind, shape, b, np.random.default_rng(100 + b))
        x_path = os.path.join(wd, f"x_b{b}.npy")
        np.save(x_path, x)
        xt = torch.from_numpy(x)
        runs = args.runs if b == 1 else max(10, args.runs // 4)
        ref = None
        for label, half, graph in (("torch_fp32_eager", False, False), ("torch_fp16_eager", True, False),
                                   ("torch_fp32_graph", False, True), ("torch_fp16_graph", True, True)):
            if (graph and not cuda) or (half and not cuda) or left(args) < 20:
                continue
            r = step(f"{name}_b{b}_{label}", bench_torch, torch, model, xt, runs, cuda, half, graph)
            if r:
                rb[label] = r[0]
                if label == "torch_fp32_eager":
                    ref = r[1]
                elif ref is not None:
                    rb[label].update(agreement(ref, r[1], name == "resnet50"))
        if smoke and ref is None:
            r = step(f"{name}_b{b}_torch_cpu", bench_torch, torch, model, xt, 2, False, False, False)
            if r:
                rb["torch_fp32_cpu"], ref = r
        yq8 = None
        if out is not None and left(args) > 15:
            r = step(f"{name}_b{b}_q8", q8_bench, args, q8, x_path, in_name, runs if not smoke else 2, env)
            if r:
                rb["q8_int8"] = r
            y = step(f"{name}_b{b}_q8_output", q8_output, args, q8, x_path, in_name, env)
            if y is not None and ref is not None and "q8_int8" in rb:
                rb["q8_int8"].update(agreement(ref, y, name == "resnet50"))
            yq8 = y
            if args.profile and b == max(args.batches) and left(args) > 30:
                prof = step(f"{name}_b{b}_q8_profile", q8_profile, args, q8, x_path, in_name, env)
                if prof:
                    rb["q8_profile"] = prof
        if ort is not None and left(args) > 20 and (b == 1 or args.ort_all):
            r = step(f"{name}_b{b}_onnxruntime", bench_ort, ort, onnx_path, in_name, x, runs if cuda else 3)
            if r:
                rb["onnxruntime"] = r[0]
                if ref is not None:
                    rb["onnxruntime"].update(agreement(ref, r[1], name == "resnet50"))
                # the same ONNX graph in FP32: where a random-weight model's
                # output is ill-conditioned (BERT: torch FP16 vs FP32 cosine
                # 0.78, ORT FP32 vs torch FP32 0.886), this is q8's INT8 loss
                if yq8 is not None and "q8_int8" in rb:
                    a = agreement(r[1], yq8, name == "resnet50")
                    rb["q8_int8"].update({k.replace("torch_fp32", "onnxruntime_fp32") + ("_vs_onnxruntime_fp32" if "cosine" not in k else ""): v
                                          for k, v in a.items() if k != "ref_max_abs"})


def bench_ort(ort, path, in_name, x, runs):
    avail = ort.get_available_providers()
    prov = [p for p in ("CUDAExecutionProvider",) if p in avail] + ["CPUExecutionProvider"]
    s = ort.InferenceSession(path, providers=prov)
    used = s.get_providers()[0]
    feed = {in_name: x}
    for _ in range(2):
        y = s.run(None, feed)[0]
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        s.run(None, feed)
        ts.append((time.perf_counter() - t) * 1e3)
    return {"provider": used, "median_ms": float(np.median(ts)), "min_ms": float(np.min(ts)),
            "runs": runs, "version": ort.__version__}, y


# ---------------------------------------------------------------- INT8 GEMM

def bench_gemm(args, torch):
    n = args.gemm
    # q8's exact cuBLASLt call at workspace limits 0, 4 (q8's default) and 32
    # MiB (what cuBLAS suggests on Hopper): the measured cost of the footprint
    for ws in (4, 0, 32):
        q = run([os.path.join(args.bundle, "bin", "gpu_igemm_bench"), str(n), str(n), str(n), "50",
                 str(ws)], timeout=120, env=q8_env())
        key = "q8_cublaslt_int8" if ws == 4 else f"q8_cublaslt_int8_ws{ws}mib"
        RESULTS["int8_gemm"][key] = json.loads(q.strip().splitlines()[-1])
    ops = 2.0 * n ** 3

    def timed(fn):
        for _ in range(5):
            fn()
        med, mn = torch_time(torch, fn, 50, True)
        return {"median_ms": med, "tops": ops / (med * 1e-3) / 1e12}

    a = torch.randint(-128, 127, (n, n), dtype=torch.int8, device="cuda")
    b = torch.randint(-128, 127, (n, n), dtype=torch.int8, device="cuda")
    try:
        RESULTS["int8_gemm"]["torch_int_mm"] = timed(lambda: torch._int_mm(a, b))
    except Exception as e:  # noqa: BLE001 - some versions want mat2 column-major
        bt = b.t().contiguous().t()
        r = timed(lambda: torch._int_mm(a, bt))
        r["note"] = f"mat2 column-major ({type(e).__name__} with row-major)"
        RESULTS["int8_gemm"]["torch_int_mm"] = r
    ah, bh = a.half(), b.half()
    RESULTS["int8_gemm"]["torch_fp16_matmul"] = timed(lambda: ah @ bh)


# ---------------------------------------------------------------- report

def mb(v):
    return f"{v / 2**20:.1f}" if isinstance(v, (int, float)) else "-"


def report(args):
    lines = [f"# q8 GPU benchmark ({RESULTS.get('date', '')})", "",
             f"Device: {RESULTS.get('device', '?')}; torch {RESULTS.get('torch', '?')}, "
             f"onnxruntime {RESULTS.get('onnxruntime', 'absent')}. Command: `{RESULTS.get('command', '')}`.",
             "", "Latency, median of the runs: compute = device time of one inference with the input "
             "already on the device (CUDA events: around the forward for PyTorch, around the "
             "kernels of a run for q8); end to end = pinned host input to host output, wall clock "
             "(onnxruntime: wall clock of session.run). Memory: q8 = bytes q8 "
             "cudaMalloc'd (weights + arena) and the drop in free device memory across session "
             "creation and first run; PyTorch = peak allocated and the same free-memory drop.", ""]
    g = RESULTS["int8_gemm"]
    if g:
        lines += [f"## INT8 GEMM {args.gemm}^3", "", "| runner | median ms | TOPS |", "|---|---:|---:|"]
        for key in ("q8_cublaslt_int8", "q8_cublaslt_int8_ws0mib", "q8_cublaslt_int8_ws32mib"):
            q = g.get(key)
            if not q:
                continue
            ws = f"workspace limit {q.get('workspace_limit_bytes', 0) >> 20} MiB, used {q.get('workspace_bytes', 0)} B"
            lines.append(f"| q8 cuBLASLt INT8 (int32 out; {ws}) | {q['int8_gemm_ms']:.3f} | {q['int8_gemm_tops']:.1f} |")
            lines.append(f"| q8 cuBLASLt INT8 + requant epilogue ({ws}) | {q['int8_gemm_epilogue_ms']:.3f} | "
                         f"{q['int8_gemm_epilogue_tops']:.1f} |")
        for k, lab in (("torch_int_mm", "torch._int_mm"), ("torch_fp16_matmul", "torch FP16 matmul (TFLOPS)")):
            if k in g:
                lines.append(f"| {lab} | {g[k]['median_ms']:.3f} | {g[k]['tops']:.1f} |")
        lines.append("")
    for name, mres in RESULTS["models"].items():
        lines += [f"## {name}", "", f"{mres.get('source', '')}", ""]
        for bk, rb in mres.items():
            if not bk.startswith("b") or not isinstance(rb, dict):
                continue
            lines += [f"### batch {bk[1:]}", "", "| runner | compute ms | end-to-end ms | compute vs torch "
                      "FP32 eager | device MB (alloc / delta) | agreement with torch FP32 |",
                      "|---|---:|---:|---:|---:|---|"]
            base = rb.get("torch_fp32_eager", {}).get("median_ms")
            for k in ("q8_int8", "torch_fp32_eager", "torch_fp16_eager", "torch_fp32_graph",
                      "torch_fp16_graph", "onnxruntime", "torch_fp32_cpu"):
                r = rb.get(k)
                if not r or "median_ms" not in r:
                    continue
                sp = f"{base / r['median_ms']:.2f}x" if base else "-"
                alloc = r.get("device_bytes", r.get("peak_allocated_bytes"))
                agr = ", ".join(f"{a} {r[a]:.4g}" for a in ("cosine_vs_torch_fp32", "top1_agreement", "cosine_vs_onnxruntime_fp32", "top1_agreement_vs_onnxruntime_fp32") if a in r)
                lab = k + (f" ({r['provider']})" if k == "onnxruntime" else "")
                if k == "q8_int8":
                    lab += f" ({r.get('igemm_fallbacks', '?')} GEMM fallbacks)"
                e2e = r.get("e2e_median_ms")
                comp = "-" if k == "onnxruntime" else f"{r['median_ms']:.3f}"
                e2e_s = f"{e2e:.3f}" if e2e is not None else (f"{r['median_ms']:.3f}" if k == "onnxruntime" else "-")
                if k == "onnxruntime":
                    sp = "-"
                lines.append(f"| {lab} | {comp} | {e2e_s} | {sp} | {mb(alloc)} / "
                             f"{mb(r.get('device_delta_bytes'))} | {agr} |")
            if rb.get("q8_profile"):
                lines += ["", "q8run --profile (ms per run, by op type then node):", "", "```"] + \
                    rb["q8_profile"][:25] + ["```"]
            if "quantize" in rb:
                lines.append(f"\nq8 file: {rb['quantize']['q8_bytes']} bytes (ONNX {mres.get('onnx_bytes')}); "
                             f"quantize took {rb['quantize']['s']} s.")
            lines.append("")
    bad = {k: v["error"] for k, v in RESULTS["steps"].items() if not v["ok"]}
    if bad:
        lines += ["## Steps that failed", ""] + [f"- {k}: `{v[:300]}`" for k, v in bad.items()] + [""]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--work", default=None, help="scratch folder (default: a temp dir)")
    ap.add_argument("--budget", type=float, default=330, help="seconds for everything")
    ap.add_argument("--models", default="resnet50,bert")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--runs", type=int, default=100, help="timed runs at batch 1 (a quarter at 32)")
    ap.add_argument("--calib", type=int, default=4, help="calibration samples")
    ap.add_argument("--gemm", type=int, default=4096)
    ap.add_argument("--ort-all", action="store_true", help="onnxruntime at every batch (slow on CPU)")
    ap.add_argument("--smoke", action="store_true", help="tiny models, emulated backend, CPU torch")
    ap.add_argument("--profile", action="store_true", help="also q8run --profile at the largest batch")
    args = ap.parse_args()
    global ARGS
    ARGS = args
    args.batches = [int(b) for b in args.batches.split(",")]
    args.bundle = os.path.abspath(args.bundle)
    os.makedirs(args.out, exist_ok=True)
    own_work = args.work is None
    args.work = args.work or tempfile.mkdtemp(prefix="q8gpu_")
    os.makedirs(args.work, exist_ok=True)
    if args.smoke:
        args.batches = [1, 2]
        args.calib = 2
    RESULTS["date"] = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    RESULTS["command"] = " ".join(sys.argv)
    import torch
    RESULTS["torch"] = torch.__version__
    if torch.cuda.is_available():
        RESULTS["device"] = torch.cuda.get_device_name(0)
        RESULTS["cuda_torch"] = torch.version.cuda
    elif not args.smoke:
        log("no CUDA device visible to PyTorch")
    try:
        import onnxruntime as ort
        RESULTS["onnxruntime"] = f"{ort.__version__} {ort.get_available_providers()}"
    except Exception:  # noqa: BLE001
        ort = None
    if not args.smoke and torch.cuda.is_available():
        step("int8_gemm", bench_gemm, args, torch)
    makers = {"resnet50": make_resnet50, "bert": make_bert}
    for name in args.models.split(","):
        if left(args) < 40:
            RESULTS["models"][name] = {"skipped": "time budget"}
            continue
        step(f"{name}", bench_bert if name == "bert" else bench_model, args, torch, ort, name,
             makers[name])
    save(args)
    print(report(args))
    if own_work:
        shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    main()
