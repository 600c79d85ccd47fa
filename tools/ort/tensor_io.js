// Tensor files for run_ort.js: .npy (read + write) and ONNX TensorProto .pb (read).
//
// A tensor here is {type, dims, data}: type is an onnxruntime type name
// ('float32', 'int64', 'bool', ...), dims an array of numbers, data the typed
// array onnxruntime-node uses for that type (BigInt64Array for int64,
// Uint8Array for bool, Uint16Array holding the raw bits for float16).
'use strict';

const fs = require('fs');
const path = require('path');

// type name -> [npy descr without byte order, typed array constructor, element bytes]
const TYPES = {
  float32: ['f4', Float32Array, 4],
  float64: ['f8', Float64Array, 8],
  float16: ['f2', Uint16Array, 2],
  int64: ['i8', BigInt64Array, 8],
  uint64: ['u8', BigUint64Array, 8],
  int32: ['i4', Int32Array, 4],
  uint32: ['u4', Uint32Array, 4],
  int16: ['i2', Int16Array, 2],
  uint16: ['u2', Uint16Array, 2],
  int8: ['i1', Int8Array, 1],
  uint8: ['u1', Uint8Array, 1],
  bool: ['b1', Uint8Array, 1],
};
const BY_DESCR = {};
for (const [name, [d]] of Object.entries(TYPES)) BY_DESCR[d] = name;

class TensorFileError extends Error {}

function fail(file, msg) {
  throw new TensorFileError(`${file}: ${msg}`);
}

function numel(dims) {
  return dims.reduce((a, b) => a * b, 1);
}

// Copies `bytes` (a Uint8Array view) into a fresh, aligned typed array of `type`.
function typedFromBytes(type, bytes, count, swap) {
  const [, Ctor, size] = TYPES[type];
  const buf = new Uint8Array(count * size);
  buf.set(bytes.subarray(0, count * size));
  if (swap && size > 1) {
    for (let i = 0; i < buf.length; i += size) buf.subarray(i, i + size).reverse();
  }
  return new Ctor(buf.buffer, 0, count);
}

// ---------------------------------------------------------------- .npy

function parseNpy(file, raw) {
  const u8 = new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength);
  if (u8.length < 10 || raw.toString('latin1', 0, 6) !== '\x93NUMPY') fail(file, 'not a .npy file');
  const major = u8[6];
  let hlen, hstart;
  if (major === 1) {
    hlen = u8[8] | (u8[9] << 8);
    hstart = 10;
  } else if (major === 2 || major === 3) {
    if (u8.length < 12) fail(file, 'truncated .npy header');
    hlen = (u8[8] | (u8[9] << 8) | (u8[10] << 16)) + u8[11] * 0x1000000;
    hstart = 12;
  } else {
    fail(file, `unsupported .npy version ${major}`);
  }
  if (hstart + hlen > u8.length) fail(file, 'truncated .npy header');
  const header = raw.toString('latin1', hstart, hstart + hlen);
  const descrM = /'descr'\s*:\s*'([<>|=])([a-z]\d+)'/.exec(header);
  const fortM = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const shapeM = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  if (!descrM || !fortM || !shapeM) fail(file, `cannot parse .npy header ${JSON.stringify(header)}`);
  const type = BY_DESCR[descrM[2]];
  if (!type) fail(file, `unsupported dtype '${descrM[1]}${descrM[2]}'`);
  const dims = shapeM[1]
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map((s) => {
      const v = Number(s.replace(/L$/, ''));
      if (!Number.isSafeInteger(v) || v < 0) fail(file, `bad dimension '${s}' in the shape`);
      return v;
    });
  if (fortM[1] === 'True' && dims.filter((d) => d > 1).length > 1)
    fail(file, 'Fortran-order arrays are not supported; save with np.ascontiguousarray');
  const count = numel(dims);
  const size = TYPES[type][2];
  const data = u8.subarray(hstart + hlen);
  if (data.length < count * size)
    fail(file, `holds ${data.length} data bytes, shape [${dims}] needs ${count * size}`);
  return { type, dims, data: typedFromBytes(type, data, count, descrM[1] === '>') };
}

function npyBytes(t) {
  const spec = TYPES[t.type];
  if (!spec) throw new TensorFileError(`cannot write a '${t.type}' tensor as .npy`);
  const order = spec[2] === 1 ? '|' : '<';
  const shape = t.dims.length === 1 ? `(${t.dims[0]},)` : `(${t.dims.join(', ')})`;
  let header = `{'descr': '${order}${spec[0]}', 'fortran_order': False, 'shape': ${shape}, }`;
  // Pad so that the data starts at a multiple of 64 bytes, header ends in '\n'.
  const total = Math.ceil((10 + header.length + 1) / 64) * 64;
  header = header.padEnd(total - 10 - 1, ' ') + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const d = t.data;
  const body = Buffer.from(d.buffer, d.byteOffset, d.byteLength);
  if (body.length !== numel(t.dims) * spec[2]) throw new TensorFileError('data size does not match dims');
  return Buffer.concat([pre, Buffer.from(header, 'latin1'), body]);
}

// Writes atomically: a temporary file in the same folder, then rename.
function writeNpy(file, t) {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  fs.writeFileSync(tmp, npyBytes(t));
  fs.renameSync(tmp, file);
}

// ---------------------------------------------------------------- .pb (onnx.TensorProto)

// ONNX TensorProto.DataType -> type name
const PB_TYPES = {
  1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64',
  9: 'bool', 10: 'float16', 11: 'float64', 12: 'uint32', 13: 'uint64',
};

class PbReader {
  constructor(file, u8) {
    this.file = file;
    this.u8 = u8;
    this.pos = 0;
  }
  varint() {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.u8.length || shift > 63n) fail(this.file, 'malformed protobuf varint');
      const b = this.u8[this.pos++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
    }
  }
  bytes(n) {
    if (n < 0 || this.pos + n > this.u8.length) fail(this.file, 'truncated protobuf field');
    const b = this.u8.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
}

function parsePb(file, raw) {
  const r = new PbReader(file, new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength));
  const dims = [];
  let dataType = 0;
  let rawData = null;
  let location = 0;
  const lists = { 4: [], 5: [], 7: [], 10: [], 11: [] }; // float, int32, int64, double, uint64
  while (r.pos < r.u8.length) {
    const key = Number(r.varint());
    const field = key >>> 3;
    const wire = key & 7;
    // Numeric repeated fields: packed (wire 2) or one element each.
    const takeNums = (kind) => {
      const dst = field === 1 ? dims : lists[field];
      const one = (rr) => {
        if (kind === 'f32') return new DataView(rr.bytes(4).slice().buffer).getFloat32(0, true);
        if (kind === 'f64') return new DataView(rr.bytes(8).slice().buffer).getFloat64(0, true);
        return rr.varint();
      };
      if (wire === 2) {
        const n = Number(r.varint());
        const sub = new PbReader(file, r.bytes(n));
        while (sub.pos < sub.u8.length) dst.push(one(sub));
      } else {
        dst.push(one(r));
      }
    };
    if (field === 1) takeNums('varint');
    else if (field === 2 && wire === 0) dataType = Number(r.varint());
    else if (field === 4) takeNums('f32');
    else if (field === 10) takeNums('f64');
    else if (field === 5 || field === 7 || field === 11) takeNums('varint');
    else if (field === 9 && wire === 2) rawData = r.bytes(Number(r.varint()));
    else if (field === 14 && wire === 0) location = Number(r.varint());
    else if (field === 6) fail(file, 'string tensors are not supported');
    else if (wire === 0) r.varint();
    else if (wire === 1) r.bytes(8);
    else if (wire === 2) r.bytes(Number(r.varint()));
    else if (wire === 5) r.bytes(4);
    else fail(file, `unsupported protobuf wire type ${wire}`);
  }
  if (location === 1) fail(file, 'tensors with external data are not supported');
  const type = PB_TYPES[dataType];
  if (!type) fail(file, `unsupported TensorProto data_type ${dataType}`);
  const shape = dims.map((d) => {
    const v = Number(BigInt.asIntN(64, d));
    if (v < 0) fail(file, `negative dimension ${v}`);
    return v;
  });
  const count = numel(shape);
  const [, Ctor, size] = TYPES[type];
  let data;
  if (rawData) {
    if (rawData.length < count * size)
      fail(file, `raw_data has ${rawData.length} bytes, shape [${shape}] needs ${count * size}`);
    data = typedFromBytes(type, rawData, count, false);
  } else {
    const src = { float32: 4, float64: 10, int64: 7, uint64: 11, uint32: 11 }[type] || 5;
    const vals = lists[src];
    if (vals.length !== count) fail(file, `holds ${vals.length} values, shape [${shape}] needs ${count}`);
    data = new Ctor(count);
    for (let i = 0; i < count; i++) {
      const v = vals[i];
      if (Ctor === BigInt64Array) data[i] = BigInt.asIntN(64, v);
      else if (Ctor === BigUint64Array) data[i] = BigInt.asUintN(64, v);
      else if (typeof v === 'bigint') data[i] = Number(BigInt.asIntN(32, v));
      else data[i] = v;
    }
  }
  return { type, dims: shape, data };
}

// Reads a .npy or .pb tensor file (by content, like q8run).
function readTensor(file) {
  let raw;
  try {
    raw = fs.readFileSync(file);
  } catch (e) {
    throw new TensorFileError(`${file}: cannot read (${e.code || e.message})`);
  }
  if (raw.length >= 6 && raw.toString('latin1', 0, 6) === '\x93NUMPY') return parseNpy(file, raw);
  return parsePb(file, raw);
}

// Like q8's q8_cli_sanitize (tools/cli_util.c): every UTF-8 byte outside
// [A-Za-z0-9._-] becomes '_' (so 'é' gives '__', as in q8run), at most 255
// bytes; never '', '.' or '..'.
function sanitizeName(name) {
  let s = '';
  for (const b of Buffer.from(name, 'utf8').subarray(0, 255)) {
    const c = String.fromCharCode(b);
    s += /[A-Za-z0-9._-]/.test(c) ? c : '_';
  }
  return s === '' || s === '.' || s === '..' ? `_${s}` : s;
}

module.exports = { TYPES, TensorFileError, readTensor, parseNpy, parsePb, writeNpy, npyBytes, sanitizeName, numel };
