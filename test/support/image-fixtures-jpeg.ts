/**
 * A small JPEG encoder for test fixtures (ITU T.81): YCbCr 4:4:4, baseline (optionally with
 * restart intervals) or progressive with spectral selection (a DC scan, then one AC scan per
 * component with a DHT before each). Huffman tables are flat (every symbol the same length),
 * which is valid and keeps the encoder short; compression is not the point.
 */

export type Rgb = readonly [number, number, number];

export interface JpegOptions {
  quality?: number;
  progressive?: boolean;
  /** MCUs per restart interval (baseline only). */
  restartInterval?: number;
}

const LUMA = [
  16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62, 18, 22,
  37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
];
const CHROMA = [
  17,
  18,
  24,
  47,
  99,
  99,
  99,
  99,
  18,
  21,
  26,
  66,
  99,
  99,
  99,
  99,
  24,
  26,
  56,
  99,
  99,
  99,
  99,
  99,
  47,
  66,
  99,
  99,
  99,
  99,
  99,
  99,
  ...new Array<number>(32).fill(99),
];

/** ZIGZAG[k] is the natural (row-major) index of the k-th coefficient in zig-zag order. */
export const ZIGZAG: number[] = (() => {
  const order: number[] = [];
  for (let s = 0; s < 15; s++) {
    for (let i = 0; i <= s; i++) {
      const row = s & 1 ? i : s - i;
      const col = s - row;
      if (row < 8 && col < 8) order.push(row * 8 + col);
    }
  }
  return order;
})();

const DC_SYMBOLS = Array.from({ length: 12 }, (_, i) => i);
const AC_SYMBOLS = [0x00, 0xf0];
for (let r = 0; r < 16; r++) for (let s = 1; s <= 10; s++) AC_SYMBOLS.push((r << 4) | s);
/** Flat canonical codes: the code of a symbol is its index, at a fixed length. */
const DC_CODE = new Map(DC_SYMBOLS.map((s, i) => [s, i]));
const AC_CODE = new Map(AC_SYMBOLS.map((s, i) => [s, i]));

const COS = Array.from({ length: 64 }, (_, i) => {
  const x = i >> 3;
  const u = i & 7;
  return Math.cos(((2 * x + 1) * u * Math.PI) / 16) * (u === 0 ? Math.SQRT1_2 : 1);
});

function fdct(block: Float64Array): Float64Array {
  const tmp = new Float64Array(64);
  const out = new Float64Array(64);
  for (let y = 0; y < 8; y++)
    for (let u = 0; u < 8; u++) {
      let s = 0;
      for (let x = 0; x < 8; x++) s += block[y * 8 + x]! * COS[x * 8 + u]!;
      tmp[y * 8 + u] = s / 2;
    }
  for (let u = 0; u < 8; u++)
    for (let v = 0; v < 8; v++) {
      let s = 0;
      for (let y = 0; y < 8; y++) s += tmp[y * 8 + u]! * COS[y * 8 + v]!;
      out[v * 8 + u] = s / 2;
    }
  return out;
}

class BitWriter {
  bytes: number[] = [];
  private acc = 0;
  private n = 0;
  write(value: number, length: number): void {
    for (let i = length - 1; i >= 0; i--) {
      this.acc = (this.acc << 1) | ((value >> i) & 1);
      if (++this.n === 8) this.emit();
    }
  }
  private emit(): void {
    this.bytes.push(this.acc);
    if (this.acc === 0xff) this.bytes.push(0x00); // byte stuffing (F.1.2.3)
    this.acc = 0;
    this.n = 0;
  }
  flush(): void {
    while (this.n !== 0) this.write(1, 1);
  }
}

function pushAll(out: number[], bytes: number[]): void {
  for (const b of bytes) out.push(b);
}

const category = (v: number) => (v === 0 ? 0 : 32 - Math.clz32(Math.abs(v)));
const magnitude = (v: number, s: number) => (v < 0 ? v + (1 << s) - 1 : v);

function segment(marker: number, payload: number[]): number[] {
  const len = payload.length + 2;
  return [0xff, marker, len >> 8, len & 0xff, ...payload];
}

function dht(tableClass: number, id: number, symbols: number[], length: number): number[] {
  const counts = new Array<number>(16).fill(0);
  counts[length - 1] = symbols.length;
  return segment(0xc4, [(tableClass << 4) | id, ...counts, ...symbols]);
}

/** Encodes `pixel(x, y)` as a JFIF JPEG. */
export function encodeJpeg(width: number, height: number, pixel: (x: number, y: number) => Rgb, options: JpegOptions = {}): Uint8Array {
  const quality = options.quality ?? 90;
  const scale = quality < 50 ? 5000 / quality : 200 - 2 * quality;
  const q = (t: number[]) => t.map((v) => Math.min(255, Math.max(1, Math.floor((v * scale + 50) / 100))));
  const tables = [q(LUMA), q(CHROMA)];
  const bw = Math.ceil(width / 8);
  const bh = Math.ceil(height / 8);
  // blocks[c][i]: zig-zag ordered quantised coefficients of block i of component c.
  const blocks: Int16Array[][] = [[], [], []];
  for (let by = 0; by < bh; by++)
    for (let bx = 0; bx < bw; bx++) {
      const planes = [new Float64Array(64), new Float64Array(64), new Float64Array(64)];
      for (let i = 0; i < 64; i++) {
        const [r, g, b] = pixel(Math.min(bx * 8 + (i & 7), width - 1), Math.min(by * 8 + (i >> 3), height - 1));
        planes[0]![i] = 0.299 * r + 0.587 * g + 0.114 * b - 128;
        planes[1]![i] = -0.168736 * r - 0.331264 * g + 0.5 * b;
        planes[2]![i] = 0.5 * r - 0.418688 * g - 0.081312 * b;
      }
      planes.forEach((plane, c) => {
        const f = fdct(plane);
        const t = tables[c === 0 ? 0 : 1]!;
        const zz = new Int16Array(64);
        for (let k = 0; k < 64; k++) zz[k] = Math.max(-1023, Math.min(1023, Math.round(f[ZIGZAG[k]!]! / t[ZIGZAG[k]!]!)));
        blocks[c]!.push(zz);
      });
    }

  const out: number[] = [0xff, 0xd8];
  out.push(...segment(0xe0, [0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]));
  // DQT lists the table in zig-zag order (B.2.4.1).
  const zigzagged = (t: number[]) => ZIGZAG.map((i) => t[i]!);
  out.push(...segment(0xdb, [0x00, ...zigzagged(tables[0]!), 0x01, ...zigzagged(tables[1]!)]));
  out.push(
    ...segment(options.progressive ? 0xc2 : 0xc0, [
      8,
      height >> 8,
      height & 0xff,
      width >> 8,
      width & 0xff,
      3,
      1,
      0x11,
      0,
      2,
      0x11,
      1,
      3,
      0x11,
      1,
    ]),
  );
  out.push(...dht(0, 0, DC_SYMBOLS, 4), ...dht(1, 0, AC_SYMBOLS, 8));

  const writeDc = (w: BitWriter, diff: number) => {
    const s = category(diff);
    w.write(DC_CODE.get(s)!, 4);
    if (s) w.write(magnitude(diff, s), s);
  };
  const writeAc = (w: BitWriter, zz: Int16Array) => {
    let run = 0;
    for (let k = 1; k < 64; k++) {
      const v = zz[k]!;
      if (v === 0) {
        run++;
        continue;
      }
      for (; run > 15; run -= 16) w.write(AC_CODE.get(0xf0)!, 8);
      const s = category(v);
      w.write(AC_CODE.get((run << 4) | s)!, 8);
      w.write(magnitude(v, s), s);
      run = 0;
    }
    if (run > 0) w.write(AC_CODE.get(0x00)!, 8);
  };

  if (!options.progressive) {
    const ri = options.restartInterval ?? 0;
    if (ri) out.push(...segment(0xdd, [ri >> 8, ri & 0xff]));
    out.push(...segment(0xda, [3, 1, 0x00, 2, 0x00, 3, 0x00, 0, 63, 0]));
    const w = new BitWriter();
    let pred = [0, 0, 0];
    const mcus = bw * bh;
    for (let m = 0; m < mcus; m++) {
      if (ri && m > 0 && m % ri === 0) {
        w.flush();
        w.bytes.push(0xff, 0xd0 + ((m / ri - 1) % 8));
        pred = [0, 0, 0];
      }
      for (let c = 0; c < 3; c++) {
        const zz = blocks[c]![m]!;
        writeDc(w, zz[0]! - pred[c]!);
        pred[c] = zz[0]!;
        writeAc(w, zz);
      }
    }
    w.flush();
    pushAll(out, w.bytes);
  } else {
    out.push(...segment(0xda, [3, 1, 0x00, 2, 0x00, 3, 0x00, 0, 0, 0]));
    const dc = new BitWriter();
    const pred = [0, 0, 0];
    for (let m = 0; m < bw * bh; m++)
      for (let c = 0; c < 3; c++) {
        writeDc(dc, blocks[c]![m]![0]! - pred[c]!);
        pred[c] = blocks[c]![m]![0]!;
      }
    dc.flush();
    pushAll(out, dc.bytes);
    for (let c = 0; c < 3; c++) {
      out.push(...dht(1, 1, AC_SYMBOLS, 8));
      out.push(...segment(0xda, [1, c + 1, 0x01, 1, 63, 0]));
      const ac = new BitWriter();
      for (const zz of blocks[c]!) writeAc(ac, zz);
      ac.flush();
      pushAll(out, ac.bytes);
    }
  }
  out.push(0xff, 0xd9);
  return Uint8Array.from(out);
}
