#!/usr/bin/env node
// run_ort.js: run an ONNX model with ONNX Runtime (CPU), mirroring q8run's
// command line so that scripts can swap one for the other.
//
//   node tools/ort/run_ort.js MODEL.onnx --input [NAME=]FILE(.npy|.pb)... [--out DIR]
//        [--threads N] [--bench N] [--json] [--print N]
//
// Session: intraOpNumThreads=N, interOpNumThreads=1, sequential execution,
// all graph optimizations, CPU execution provider only.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { readTensor, writeNpy, sanitizeName, TensorFileError, numel } = require('./tensor_io');

const USAGE = `usage: node run_ort.js MODEL.onnx --input [NAME=]FILE(.npy|.pb)... [--out DIR]
                   [--threads N] [--bench N] [--json] [--print N] [--no-spin]
  Runs the model with ONNX Runtime (CPU) once on the inputs (or N timed times
  after warm-up with --bench) and writes each output to DIR/<name>.npy, or
  prints them without --out. --json: the last stdout line is one JSON object
  (median_ms, min_ms, max_ms, runs, peak_rss_bytes, ...).
  Accepted for q8run compatibility: --device cpu, --input-shape (ignored: ORT
  takes the shapes from the input files).
  --no-spin: intra-op threads sleep instead of spin-waiting between ops.
  --verbose: let ONNX Runtime print its warnings (default: errors only).
`;

class UsageError extends Error {}

function parseIntArg(opt, v, lo, hi) {
  if (v === undefined) throw new UsageError(`${opt} needs a value`);
  if (!/^\d+$/.test(v) || Number(v) < lo || Number(v) > hi)
    throw new UsageError(`${opt} needs a number from ${lo} to ${hi}, not '${v}'`);
  return Number(v);
}

function parseArgs(argv) {
  const a = { model: null, inputs: [], out: null, threads: 0, bench: 0, json: false, print: 16, spin: true, verbose: false };
  const models = [];
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let val;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const takesValue = ['--input', '--out', '--threads', '--bench', '--print', '--device', '--input-shape'];
    if (eq > 0 && takesValue.includes(arg.slice(0, eq))) {
      val = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    } else if (takesValue.includes(arg)) {
      val = argv[++i];
      if (val === undefined) throw new UsageError(`${arg} needs a value`);
    }
    switch (arg) {
      case '--input': {
        // Like q8run: the first '=' splits NAME from FILE.
        const k = val.indexOf('=');
        a.inputs.push(k >= 0 ? { name: val.slice(0, k), file: val.slice(k + 1) } : { name: null, file: val });
        break;
      }
      case '--out': a.out = val; break;
      case '--threads': a.threads = parseIntArg('--threads', val, 1, 1024); break;
      case '--bench': a.bench = parseIntArg('--bench', val, 1, 1000000); break;
      case '--print': a.print = parseIntArg('--print', val, 0, 1 << 30); break;
      case '--json': a.json = true; break;
      case '--no-spin': a.spin = false; break;
      case '--verbose': a.verbose = true; break;
      case '--device':
        if (val !== 'cpu') throw new UsageError(`--device: only cpu is supported here, not '${val}'`);
        break;
      case '--input-shape': break;
      case '-h':
      case '--help':
        process.stdout.write(USAGE);
        process.exit(0);
        break;
      default:
        if (arg.startsWith('-') && arg !== '-') throw new UsageError(`unknown option '${arg}'`);
        models.push(arg);
    }
  }
  if (models.length !== 1) throw new UsageError(models.length ? 'one model only' : 'no model given');
  a.model = models[0];
  if (a.inputs.length === 0) throw new UsageError('no --input given');
  return a;
}

function loadOrt() {
  try {
    return require('onnxruntime-node');
  } catch (e) {
    const dir = __dirname;
    throw new Error(
      `cannot load onnxruntime-node (${e.message.split('\n')[0]}); install it with\n` +
        `  (cd ${dir} && ONNXRUNTIME_NODE_INSTALL=skip npm ci)`
    );
  }
}

function stats(times) {
  const v = [...times].sort((x, y) => x - y);
  const n = v.length;
  const median = n % 2 ? v[(n - 1) / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return { median, min: v[0], max: v[n - 1] };
}

function printTensor(name, t, max) {
  const n = numel(t.dims);
  const vals = [];
  for (let i = 0; i < n && i < max; i++) {
    const x = typeof t.data[i] === 'bigint' ? Number(t.data[i]) : t.data[i];
    vals.push(Number.isInteger(x) ? String(x) : Number(x.toPrecision(6)).toString());
  }
  const more = n > max ? `, ... (${n - max} more)` : '';
  const shape = t.dims.length ? t.dims.join("x") : "scalar";
  console.log(`${name}: ${t.type} ${shape} [${vals.join(", ")}${more}]`); // as q8run
  const row = t.dims.length ? t.dims[t.dims.length - 1] : 0;
  if ((t.type === 'float32' || t.type === 'float64') && row > 1 && n > 0) {
    const rows = n / row;
    const am = [];
    for (let r = 0; r < rows && r < max; r++) {
      let best = 0;
      for (let i = 1; i < row; i++) if (t.data[r * row + i] > t.data[r * row + best]) best = i;
      am.push(best);
    }
    console.log(`${name}: argmax over the last axis [${am.join(', ')}${rows > max ? ', ...' : ''}]`);
  }
}

// Peak RSS of this process. Linux: VmHWM of /proc/self/status, the high-water
// mark of this program's own address space. getrusage's ru_maxrss (q8run's
// measure) also counts the parent's resident memory copied at fork and the
// exec'ing image (exec folds the old mm's peak into it), e.g. ~230 MB when
// started from a Python process that imported torch.
function peakRss() {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(fs.readFileSync('/proc/self/status', 'latin1'));
    if (m) return Number(m[1]) * 1024;
  } catch (e) {
    // not Linux: fall through
  }
  return process.resourceUsage().maxRSS * 1024; // kilobytes on Linux and macOS
}

async function main() {
  let a;
  try {
    a = parseArgs(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`run_ort: ${e.message}\n${USAGE}`);
    return 2;
  }
  const ort = loadOrt();
  const tensors = a.inputs.map((inp) => readTensor(inp.file));
  const rssBeforeSession = process.memoryUsage().rss;
  const threads = a.threads || (os.availableParallelism ? os.availableParallelism() : os.cpus().length);
  const opts = {
    executionProviders: ['cpu'],
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    logSeverityLevel: a.verbose ? 2 : 3,
  };
  if (!a.spin) opts.extra = { session: { intra_op: { allow_spinning: '0' } } };
  let session;
  try {
    session = await ort.InferenceSession.create(a.model, opts);
  } catch (e) {
    throw new Error(`${a.model}: ${e.message}`);
  }
  const names = session.inputNames;
  if (a.inputs.length !== names.length)
    throw new Error(`the model has ${names.length} inputs (${names.join(', ')}), ${a.inputs.length} --input given`);
  const feeds = {};
  a.inputs.forEach((inp, i) => {
    const name = inp.name === null ? names[i] : inp.name;
    if (!names.includes(name)) throw new Error(`${inp.file}: the model has no input '${name}' (it has ${names.join(', ')})`);
    if (name in feeds) throw new Error(`input '${name}' given twice`);
    const t = tensors[i];
    feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
  });

  const runs = a.bench > 0 ? a.bench : 1;
  const warm = a.bench > 0 ? (runs < 3 ? 1 : 3) : 0; // same policy as q8run
  for (let i = 0; i < warm; i++) await session.run(feeds);
  const times = [];
  let results;
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    results = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const st = stats(times);

  if (a.out) fs.mkdirSync(a.out, { recursive: true });
  for (const name of session.outputNames) {
    const r = results[name];
    const t = { type: r.type, dims: Array.from(r.dims, Number), data: r.data };
    if (a.out) {
      const file = path.join(a.out, `${sanitizeName(name)}.npy`);
      writeNpy(file, t);
      if (!a.json) console.log(`wrote ${file}`);
    } else if (!a.json || a.bench === 0) {
      printTensor(name, t, a.print);
    }
  }
  const peak = peakRss();
  if (a.bench > 0 && !a.json)
    console.log(
      `bench: ${runs} runs, median ${st.median.toFixed(3)} ms, min ${st.min.toFixed(3)} ms, ` +
        `max ${st.max.toFixed(3)} ms; peak RSS ${peak} B`
    );
  if (a.json) {
    const o = {
      model: a.model,
      runtime: 'onnxruntime-node',
      ort_version: ort.env.versions ? ort.env.versions.node || ort.env.versions.common : null,
      device: 'cpu',
      threads,
      spin: a.spin,
      runs,
      median_ms: Number(st.median.toFixed(4)),
      min_ms: Number(st.min.toFixed(4)),
      max_ms: Number(st.max.toFixed(4)),
      peak_rss_bytes: peak,
      rss_before_session_bytes: rssBeforeSession,
    };
    console.log(JSON.stringify(o));
  }
  if (session.release) await session.release();
  return 0;
}

main().then(
  (rc) => process.exit(rc),
  (e) => {
    const msg = e instanceof TensorFileError || e instanceof Error ? e.message : String(e);
    process.stderr.write(`run_ort: ${msg}\n`);
    process.exit(1);
  }
);
