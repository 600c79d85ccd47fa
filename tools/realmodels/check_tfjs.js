// Runs a TensorFlow.js graph model with TensorFlow.js's own CPU backend on
// .npy inputs and writes each output as .npy: the reference that
// convert_tfjs.py's ONNX model is checked against.
//
//   NODE_PATH=DIR/node_modules node check_tfjs.js MODEL.json OUTDIR IN.npy...
//
// DIR holds the pure-JavaScript TensorFlow.js (npm install --prefix DIR
// @tensorflow/tfjs@4.22.0); nothing native. Writes OUTDIR/<k>/<output>.npy
// for the k-th input (output names as convert_tfjs.py names them: the
// signature's names without ':0'), and prints one line per input. Inputs
// and outputs are float32 or int32 .npy.
"use strict";
const fs = require("fs");
const path = require("path");
const tf = require("@tensorflow/tfjs");

// float32 or int32 (a model whose input is int32, as MoveNet's image).
function readNpy(file) {
  const buf = fs.readFileSync(file);
  const hlen = buf.readUInt16LE(8);
  const header = buf.slice(10, 10 + hlen).toString("latin1");
  const f4 = header.includes("'<f4'"), i4 = header.includes("'<i4'");
  if (!(f4 || i4) || header.includes("'fortran_order': True"))
    throw new Error(`${file}: only C-order float32 or int32 .npy`);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(",").map((s) => s.trim())
    .filter((s) => s.length).map(Number);
  const bytes = buf.buffer.slice(buf.byteOffset + 10 + hlen, buf.byteOffset + buf.length);
  return f4 ? tf.tensor(new Float32Array(bytes), shape, "float32")
            : tf.tensor(new Int32Array(bytes), shape, "int32");
}

function writeNpy(file, t) {
  const shape = t.shape;
  const i4 = t.dtype === "int32";
  if (!i4 && t.dtype !== "float32") throw new Error(`${file}: output of dtype ${t.dtype}`);
  let header = `{'descr': '${i4 ? "<i4" : "<f4"}', 'fortran_order': False, 'shape': (${shape.join(", ")}${shape.length === 1 ? "," : ""}), }`;
  const total = 10 + header.length + 1;
  header += " ".repeat((64 - (total % 64)) % 64) + "\n";
  const h = Buffer.alloc(10);
  h.write("\x93NUMPY", 0, "latin1");
  h[6] = 1; h[7] = 0; h.writeUInt16LE(header.length, 8);
  const data = Buffer.from((i4 ? new Int32Array(t.dataSync()) : new Float32Array(t.dataSync())).buffer);
  fs.writeFileSync(file, Buffer.concat([h, Buffer.from(header, "latin1"), data]));
}

async function main() {
  const [modelJson, outDir, ...inputs] = process.argv.slice(2);
  await tf.setBackend("cpu");
  const d = JSON.parse(fs.readFileSync(modelJson, "utf8"));
  const dir = path.dirname(modelJson);
  const specs = [], bufs = [];
  for (const g of d.weightsManifest) {
    for (const w of g.weights) specs.push(w);
    for (const p of g.paths) bufs.push(fs.readFileSync(path.join(dir, p)));
  }
  const all = Buffer.concat(bufs);
  const handler = { load: async () => ({
    modelTopology: d.modelTopology, weightSpecs: specs,
    weightData: all.buffer.slice(all.byteOffset, all.byteOffset + all.length),
    format: d.format, generatedBy: d.generatedBy, convertedBy: d.convertedBy,
    signature: d.signature, userDefinedMetadata: d.userDefinedMetadata }) };
  const model = await tf.loadGraphModel(handler);
  const names = model.outputs.map((o) => o.name);
  inputs.forEach((f, k) => {
    const x = readNpy(f);
    let ys = model.execute(x, names);
    if (!Array.isArray(ys)) ys = [ys];
    const o = path.join(outDir, String(k));
    fs.mkdirSync(o, { recursive: true });
    ys.forEach((y, i) => writeNpy(path.join(o, names[i].split(":")[0].replace(/[^A-Za-z0-9._-]/g, "_") + ".npy"), y));
    console.log(`${f}: ${names.join(", ")}`);
  });
}

main().catch((e) => { console.error(`check_tfjs: ${e.message}`); process.exit(1); });
