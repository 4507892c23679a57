// Synthetic camera-size JPEGs for bench/image-memory.mjs: random quantised coefficients with a
// photo-like density (a slowly varying DC, most low and mid frequencies set, few high ones), written
// as baseline (by the library's own encoder) or as progressive with the usual script of spectral
// selection and successive approximation (by the small encoder below, T.81 G.1.2).

/** Deterministic coefficients for one component: `bw` x `bh` blocks, natural order. */
function coefficients(lib, bw, bh, seed, reach, density, amplitude) {
  let s = seed;
  const rand = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 8) / 16777216;
  const coeffs = new Int16Array(bw * bh * 64);
  for (let b = 0; b < bw * bh; b++) {
    const o = b * 64;
    coeffs[o] = Math.round(Math.sin(b / 5000) * 60 + Math.sin(b / 37) * 20);
    for (let k = 1; k < reach; k++)
      if (rand() < density) coeffs[o + lib.ZIGZAG[k]] = Math.round((rand() - 0.5) * amplitude * (1 - k / reach) * 2);
  }
  return coeffs;
}

/**
 * Frame description shared by both writers: 3 components at `sampling` ("444" | "420"); `dense`
 * sets more and larger coefficients (a file near the 20 MiB upload limit at 24 MP).
 */
export function synthFrame(lib, width, height, sampling, dense = false) {
  const hy = sampling === "420" ? 2 : 1;
  const mcusX = Math.ceil(width / (8 * hy));
  const mcusY = Math.ceil(height / (8 * hy));
  const comp = (id, h, v, tq, seed, reach, density, amplitude) => {
    const bw = mcusX * h;
    const bh = mcusY * v;
    const coeffs = coefficients(lib, bw, bh, seed, reach, density, amplitude);
    return { id, h, v, tq, bw, bh, coeffs, blockOffset: (x, y) => (y * bw + x) * 64 };
  };
  const q = (base) => Uint16Array.from({ length: 64 }, (_, i) => base + (i >> 3) + (i & 7));
  return {
    width,
    height,
    hmax: hy,
    vmax: hy,
    mcusX,
    mcusY,
    components: dense
      ? [comp(1, hy, hy, 0, 7, 48, 0.85, 40), comp(2, 1, 1, 1, 11, 28, 0.7, 24), comp(3, 1, 1, 1, 13, 28, 0.7, 24)]
      : [comp(1, hy, hy, 0, 7, 36, 0.75, 24), comp(2, 1, 1, 1, 11, 15, 0.5, 12), comp(3, 1, 1, 1, 13, 15, 0.5, 12)],
    quantTables: [q(2), q(4)],
  };
}

/** Baseline JPEG of `frame`, written by the library's encoder. */
export function synthBaseline(lib, frame) {
  return lib.encodeBaselineJpeg({
    width: frame.width,
    height: frame.height,
    components: frame.components,
    quantTables: frame.quantTables,
    order: lib.IDENTITY_ORDER,
    sign: lib.IDENTITY_SIGN,
    segments: [],
  });
}

class BitSink {
  constructor(capacity) {
    this.buf = new Uint8Array(capacity);
    this.len = 0;
    this.acc = 0;
    this.n = 0;
  }
  ensure(extra) {
    if (this.len + extra <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.len + extra + 1024));
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }
  bytes(list) {
    this.ensure(list.length);
    this.buf.set(list, this.len);
    this.len += list.length;
  }
  bits(value, n) {
    for (let i = n - 1; i >= 0; i--) {
      this.acc = (this.acc << 1) | ((value >> i) & 1);
      if (++this.n === 8) {
        this.ensure(2);
        this.buf[this.len++] = this.acc;
        if (this.acc === 0xff) this.buf[this.len++] = 0;
        this.acc = this.n = 0;
      }
    }
  }
  flush() {
    while (this.n) this.bits(1, 1);
  }
}

const category = (v) => (v === 0 ? 0 : 32 - Math.clz32(v < 0 ? -v : v));
const extra = (v, s) => (v < 0 ? v - 1 : v) & ((1 << s) - 1);
const segment = (marker, body) => [0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 255, ...body];

/** libjpeg's default script for three components: [component indexes, Ss, Se, Ah, Al]. */
const SCRIPT = [
  [[0, 1, 2], 0, 0, 0, 1],
  [[0], 1, 5, 0, 2],
  [[2], 1, 63, 0, 1],
  [[1], 1, 63, 0, 1],
  [[0], 6, 63, 0, 2],
  [[0], 1, 63, 2, 1],
  [[0, 1, 2], 0, 0, 1, 0],
  [[2], 1, 63, 1, 0],
  [[1], 1, 63, 1, 0],
  [[0], 1, 63, 1, 0],
];

/**
 * Codes one scan into `out` through `sym(table, symbol)` and `bits(value, n)`. AC first scans use
 * end-of-band runs; refinement scans end every block on its own EOB (valid, slightly larger).
 */
function codeScan(lib, frame, [cis, ss, se, ah, al], sym, bits) {
  const preds = [0, 0, 0];
  let eobrun = 0;
  const flushRun = () => {
    if (!eobrun) return;
    const r = 31 - Math.clz32(eobrun);
    sym(0, r << 4);
    bits(eobrun - (1 << r), r);
    eobrun = 0;
  };
  const block = (ci, c, o) => {
    if (ss === 0) {
      const t = ci === 0 ? 0 : 1;
      if (ah) return bits((c[o] >> al) & 1, 1);
      const dc = c[o] >> al;
      const diff = dc - preds[ci];
      preds[ci] = dc;
      const s = category(diff);
      sym(t, s);
      bits(extra(diff, s), s);
      return;
    }
    const Z = lib.ZIGZAG;
    if (ah === 0) {
      let last = ss - 1;
      for (let k = ss; k <= se; k++) if (Math.abs(c[o + Z[k]]) >> al) last = k;
      if (last < ss) {
        if (++eobrun === 0x7fff) flushRun();
        return;
      }
      flushRun();
      let run = 0;
      for (let k = ss; k <= last; k++) {
        const a = Math.abs(c[o + Z[k]]) >> al;
        if (!a) {
          run++;
          continue;
        }
        for (; run > 15; run -= 16) sym(0, 0xf0);
        const v = c[o + Z[k]] < 0 ? -a : a;
        const s = category(v);
        sym(0, (run << 4) | s);
        bits(extra(v, s), s);
        run = 0;
      }
      if (last < se) eobrun++;
      if (eobrun === 0x7fff) flushRun();
      return;
    }
    let lastNew = ss - 1;
    for (let k = ss; k <= se; k++) if (Math.abs(c[o + Z[k]]) >> al === 1) lastNew = k;
    let run = 0;
    let pending = [];
    for (let k = ss; k <= se; k++) {
      const a = Math.abs(c[o + Z[k]]);
      if (a >> ah) pending.push((a >> al) & 1);
      else if (a >> al) {
        sym(0, (run << 4) | 1);
        bits(c[o + Z[k]] > 0 ? 1 : 0, 1);
        for (const b of pending) bits(b, 1);
        run = 0;
        pending = [];
      } else if (k <= lastNew && ++run === 16) {
        sym(0, 0xf0);
        for (const b of pending) bits(b, 1);
        run = 0;
        pending = [];
      }
    }
    if (lastNew < se) {
      sym(0, 0x00);
      for (const b of pending) bits(b, 1);
    }
  };
  const comps = cis.map((i) => frame.components[i]);
  if (cis.length > 1) {
    for (let my = 0; my < frame.mcusY; my++)
      for (let mx = 0; mx < frame.mcusX; mx++)
        cis.forEach((ci, j) => {
          const c = comps[j];
          for (let y = 0; y < c.v; y++) for (let x = 0; x < c.h; x++) block(ci, c.coeffs, c.blockOffset(mx * c.h + x, my * c.v + y));
        });
  } else {
    const c = comps[0];
    const w = Math.ceil(Math.ceil((frame.width * c.h) / frame.hmax) / 8);
    const h = Math.ceil(Math.ceil((frame.height * c.v) / frame.vmax) / 8);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) block(cis[0], c.coeffs, c.blockOffset(x, y));
  }
  flushRun();
}

/** Progressive JPEG of `frame` (SOF2) with per-scan optimised Huffman tables. */
export function synthProgressive(lib, frame) {
  const out = new BitSink(8 << 20);
  out.bytes([0xff, 0xd8]);
  const dqt = [];
  frame.quantTables.forEach((q, tq) => dqt.push(tq, ...lib.ZIGZAG.map((i) => q[i])));
  out.bytes(segment(0xdb, dqt));
  const sof = [8, frame.height >> 8, frame.height & 255, frame.width >> 8, frame.width & 255, 3];
  for (const c of frame.components) sof.push(c.id, (c.h << 4) | c.v, c.tq);
  out.bytes(segment(0xc2, sof));
  for (const scan of SCRIPT) {
    const [cis, ss, , ah] = scan;
    const freq = [new Float64Array(256), new Float64Array(256)];
    codeScan(
      lib,
      frame,
      scan,
      (t, s) => freq[t][s]++,
      () => {},
    );
    const dc = ss === 0;
    const codes = freq.map((f) => (f.some((x) => x) ? lib.buildHuffmanCode(f) : undefined));
    if (!(dc && ah)) {
      const dht = [];
      codes.forEach((hc, t) => hc && dht.push(((dc ? 0 : 1) << 4) | t, ...hc.counts, ...hc.values));
      out.bytes(segment(0xc4, dht));
    }
    const sos = [cis.length];
    for (const i of cis) sos.push(frame.components[i].id, dc ? (i === 0 ? 0x00 : 0x10) : 0x00);
    sos.push(ss, scan[2], (ah << 4) | scan[4]);
    out.bytes(segment(0xda, sos));
    codeScan(
      lib,
      frame,
      scan,
      (t, s) => out.bits(codes[t].code[s], codes[t].size[s]),
      (v, n) => out.bits(v, n),
    );
    out.flush();
  }
  out.bytes([0xff, 0xd9]);
  return out.buf.subarray(0, out.len);
}
