#!/usr/bin/env node
// MinMax calibration by ONNX Runtime, for tools/bench/ort_qdq.py: one session,
// every sample; prints one JSON object {output name: [min, max]} over all of
// them (float outputs only).
//   node tools/ort/minmax_ort.js MODEL.onnx SAMPLES.json
// SAMPLES.json: [{"input name": "file.npy", ...}, ...]
'use strict';

const fs = require('fs');
const { readTensor } = require('./tensor_io');

async function main() {
  const [model, list] = process.argv.slice(2);
  if (!model || !list) {
    process.stderr.write('usage: node minmax_ort.js MODEL.onnx SAMPLES.json\n');
    return 2;
  }
  const ort = require('onnxruntime-node');
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], graphOptimizationLevel: 'all', logSeverityLevel: 3,
  });
  const range = {};
  for (const sample of JSON.parse(fs.readFileSync(list, 'utf8'))) {
    const feeds = {};
    for (const [name, file] of Object.entries(sample)) {
      const t = readTensor(file);
      feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
    }
    const out = await session.run(feeds);
    for (const name of session.outputNames) {
      const r = out[name];
      if (r.type !== 'float32' || r.data.length === 0) continue;
      let lo = Infinity, hi = -Infinity;
      for (const v of r.data) {
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
      const old = range[name] || [lo, hi];
      range[name] = [Math.min(old[0], lo), Math.max(old[1], hi)];
    }
  }
  process.stdout.write(JSON.stringify(range) + '\n');
  return 0;
}

main().then((rc) => process.exit(rc), (e) => {
  process.stderr.write(`minmax_ort: ${e.message}\n`);
  process.exit(1);
});
