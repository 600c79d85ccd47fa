// Run an ONNX model with onnxruntime-node on one float32 .npy input; write the first
// output as float32 .npy. A peer runtime for checking exports and for reports.
//
// usage: node ort_run.js MODEL.onnx INPUT.npy OUTPUT.npy [--batch B]
//   --batch B  run in chunks of B rows along dim 0 (default: all at once)
// onnxruntime-node must be resolvable, e.g. installed in a temp folder with
//   npm install --ignore-scripts onnxruntime-node   and   NODE_PATH=<that>/node_modules
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

function readNpy(path) {
    const buf = fs.readFileSync(path);
    if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${path}: not a .npy`);
    const major = buf[6];
    const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
    const hstart = major === 1 ? 10 : 12;
    const header = buf.toString('latin1', hstart, hstart + hlen);
    if (!/'descr':\s*'<f4'/.test(header) || /'fortran_order':\s*True/.test(header))
        throw new Error(`${path}: need little-endian float32, C order: ${header}`);
    const shape = header.match(/'shape':\s*\(([^)]*)\)/)[1]
        .split(',').map(s => s.trim()).filter(s => s.length).map(Number);
    const off = hstart + hlen;
    const data = new Float32Array(buf.buffer.slice(buf.byteOffset + off, buf.byteOffset + buf.length));
    return { shape, data };
}

function writeNpy(path, shape, data) {
    let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
    const total = 10 + header.length + 1;
    header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
    const head = Buffer.alloc(10);
    head.write('\x93NUMPY', 0, 'latin1');
    head[6] = 1; head[7] = 0;
    head.writeUInt16LE(header.length, 8);
    const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    fs.writeFileSync(path + '.tmp', Buffer.concat([head, Buffer.from(header, 'latin1'), body]));
    fs.renameSync(path + '.tmp', path);
}

async function main() {
    const args = process.argv.slice(2);
    let batch = 0;
    const bi = args.indexOf('--batch');
    if (bi >= 0) { batch = Number(args[bi + 1]); args.splice(bi, 2); }
    if (args.length !== 3) {
        console.error('usage: node ort_run.js MODEL.onnx INPUT.npy OUTPUT.npy [--batch B]');
        process.exit(2);
    }
    const [model, input, output] = args;
    const x = readNpy(input);
    const opts = { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all' };
    const sess = await ort.InferenceSession.create(model, opts);
    const n = x.shape[0], row = x.data.length / n;
    const step = batch > 0 ? batch : n;
    const parts = [];
    let outShape = null;
    for (let i = 0; i < n; i += step) {
        const b = Math.min(step, n - i);
        const t = new ort.Tensor('float32', x.data.subarray(i * row, (i + b) * row),
                                 [b, ...x.shape.slice(1)]);
        const res = await sess.run({ [sess.inputNames[0]]: t });
        const o = res[sess.outputNames[0]];
        parts.push(o.data);
        outShape = o.dims.slice();
    }
    const total = parts.reduce((s, p) => s + p.length, 0);
    const out = new Float32Array(total);
    let off = 0;
    for (const p of parts) { out.set(p, off); off += p.length; }
    outShape[0] = n;
    writeNpy(output, outShape, out);
    console.log(`${model}: ${sess.outputNames[0]} ${JSON.stringify(outShape)} -> ${output}` +
                ` (onnxruntime-node, batch ${step})`);
}

main().catch(e => { console.error(String(e && e.message || e)); process.exit(1); });
