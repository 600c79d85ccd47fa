#!/usr/bin/env node
// profile_ort.js: ONNX Runtime's per-node times, to set beside q8run --profile.
//
//   node tools/ort/profile_ort.js MODEL.onnx INPUT.npy [THREADS] [RUNS]
//
// One input (the model's first); the session as run_ort.js makes it (CPU EP,
// all graph optimizations, sequential). ORT's profiler records every node of
// every run; this prints the median per node over RUNS runs (default 50,
// after 5 warm-up runs), slowest first, and the per-op-type sums. The
// profiler itself costs time per node: compare ratios between nodes, not
// totals with run_ort.js --bench. ORT's node names are those after its
// fusions (a Conv with its activation fused is one node).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const ortDir = process.env.Q8_ORT_DIR || __dirname;
const ort = require(path.join(ortDir, 'node_modules', 'onnxruntime-node'));
const { readTensor } = require('./tensor_io');

async function main() {
  const [model, input, th = '1', rn = '50'] = process.argv.slice(2);
  if (!model || !input) {
    process.stderr.write('usage: node profile_ort.js MODEL.onnx INPUT.npy [THREADS] [RUNS]\n');
    return 2;
  }
  const prefix = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'q8prof.')), 'p');
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: Number(th), interOpNumThreads: 1,
    executionMode: 'sequential', graphOptimizationLevel: 'all', logSeverityLevel: 3,
    enableProfiling: true, profileFilePrefix: prefix,
  });
  const t = readTensor(input);
  const feeds = { [session.inputNames[0]]: new ort.Tensor(t.type, t.data, t.dims) };
  const runs = Number(rn);
  for (let i = 0; i < 5; i++) await session.run(feeds);
  for (let i = 0; i < runs; i++) await session.run(feeds);
  session.endProfiling();
  const dir = path.dirname(prefix);
  const file = fs.readdirSync(dir).map((f) => path.join(dir, f))[0];
  const ev = JSON.parse(fs.readFileSync(file, 'utf8'));
  fs.rmSync(dir, { recursive: true, force: true });
  const per = new Map();
  for (const e of ev) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    const name = e.name.slice(0, -'_kernel_time'.length);
    if (!per.has(name)) per.set(name, { op: e.args.op_name, t: [] });
    per.get(name).t.push(e.dur / 1000);
  }
  const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };
  const rows = [...per].map(([n, v]) => ({ n, op: v.op, ms: med(v.t.slice(-runs)) }));
  rows.sort((a, b) => b.ms - a.ms);
  const byOp = new Map();
  let total = 0;
  for (const r of rows) { byOp.set(r.op, (byOp.get(r.op) || 0) + r.ms); total += r.ms; }
  console.log(`ORT profile: ${total.toFixed(3)} ms per run (sum of node medians), ${rows.length} nodes`);
  for (const [op, ms] of [...byOp].sort((a, b) => b[1] - a[1]))
    console.log(`  ${op.padEnd(24)} ${ms.toFixed(3)} ms`);
  for (const r of rows) console.log(`  ${r.ms.toFixed(3)} ms  ${r.n} (${r.op})`);
  return 0;
}

main().then((c) => process.exit(c), (e) => { process.stderr.write(`profile_ort: ${e.message}\n`); process.exit(1); });
