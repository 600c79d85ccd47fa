#!/usr/bin/env node
// ort_many.js: one ONNX Runtime session over many samples (emulate_act.py).
//
//   node ort_many.js MODEL.onnx run OUTDIR IN.npy...    OUTDIR/NNNN.npy: the first output
//   node ort_many.js MODEL.onnx runall OUTDIR IN.npy... OUTDIR/NNNN/K.npy: output K (0, 1, ...)
//   node ort_many.js MODEL.onnx stats OUT.json IN.npy...
//
// stats: for every float output, its min and max over all samples and a
// 2048-bin histogram over [min, max] (two passes). run: graph optimizations
// off, so that fake-quantization nodes are run as written, never fused.
// ONNX Runtime is taken from $Q8_ORT_DIR (default: tools/ort, after npm ci).
'use strict';
const fs = require('fs');
const path = require('path');
const ortDir = process.env.Q8_ORT_DIR || path.join(__dirname, '..', 'ort');
let ort;
try {
  ort = require(path.join(ortDir, 'node_modules', 'onnxruntime-node'));
} catch (e) {
  process.stderr.write(`ort_many: no ONNX Runtime in ${ortDir}/node_modules ` +
                       '(cd tools/ort && npm ci, or set Q8_ORT_DIR)\n');
  process.exit(1);
}
const { readTensor, writeNpy } = require(path.join(__dirname, '..', 'ort', 'tensor_io'));

const BINS = 2048;

async function main() {
  const [model, mode, out, ...ins] = process.argv.slice(2);
  if (!ins.length || (mode !== 'run' && mode !== 'runall' && mode !== 'stats')) {
    process.stderr.write('usage: ort_many.js MODEL.onnx run|runall|stats OUT IN.npy...\n');
    return 2;
  }
  const s = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: 1,
    graphOptimizationLevel: mode === 'stats' ? 'basic' : 'disabled', logSeverityLevel: 3 });
  const feed = (f) => {
    const t = readTensor(f);
    return { [s.inputNames[0]]: new ort.Tensor(t.type, t.data, t.dims) };
  };
  if (mode === 'runall') {
    for (let i = 0; i < ins.length; i++) {
      const r = await s.run(feed(ins[i]));
      const d = path.join(out, String(i).padStart(4, '0'));
      fs.mkdirSync(d, { recursive: true });
      s.outputNames.forEach((n, k) => writeNpy(path.join(d, `${k}.npy`),
                                               { type: r[n].type, data: r[n].data, dims: r[n].dims }));
    }
    return 0;
  }
  if (mode === 'run') {
    fs.mkdirSync(out, { recursive: true });
    for (let i = 0; i < ins.length; i++) {
      const o = (await s.run(feed(ins[i])))[s.outputNames[0]];
      writeNpy(path.join(out, `${String(i).padStart(4, '0')}.npy`),
               { type: o.type, data: o.data, dims: o.dims });
    }
    return 0;
  }
  const st = {};
  for (const pass of [0, 1]) {
    for (const f of ins) {
      const r = await s.run(feed(f));
      for (const n of s.outputNames) {
        const d = r[n].data;
        if (!(d instanceof Float32Array)) continue;
        const e = st[n] || (st[n] = { min: Infinity, max: -Infinity, hist: null });
        if (pass === 0) {
          for (let i = 0; i < d.length; i++) {
            if (d[i] < e.min) e.min = d[i];
            if (d[i] > e.max) e.max = d[i];
          }
          continue;
        }
        if (!e.hist) e.hist = new Array(BINS).fill(0);
        const w = (e.max - e.min) / BINS || 1;
        for (let i = 0; i < d.length; i++)
          e.hist[Math.min(BINS - 1, Math.max(0, Math.floor((d[i] - e.min) / w)))]++;
      }
    }
  }
  fs.writeFileSync(out, JSON.stringify(st));
  return 0;
}

main().then((rc) => process.exit(rc)).catch((e) => {
  process.stderr.write(`ort_many: ${e.message}\n`);
  process.exit(1);
});
