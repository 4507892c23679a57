/**
 * Inverse DCT of one 8x8 block straight to n x n samples (n = 8, 4, 2 or 1) for decoding at 1/1,
 * 1/2, 1/4 or 1/8, and JFIF YCbCr to RGB. A reduced block keeps the n x n lowest frequencies and
 * evaluates the 8-point inverse DCT (T.81 A.3.3) at the centres of the n x n cells the block is
 * shrunk to: for cell x of n, the cosine argument (2x'+1)u*pi/16 at x' = (x + 1/2) * 8/n - 1/2
 * becomes (2x+1)u*pi/(2n).
 */

const kernels = new Map<number, Float64Array>();

/** kernel[x * n + u] = C(u)/2 cos((2x+1)u pi / 2n), with C(0) = 1/sqrt(2), C(u) = 1 otherwise. */
function kernel(n: number): Float64Array {
  let k = kernels.get(n);
  if (!k) {
    k = new Float64Array(n * n);
    for (let x = 0; x < n; x++) {
      for (let u = 0; u < n; u++) k[x * n + u] = ((u === 0 ? Math.SQRT1_2 : 1) / 2) * Math.cos(((2 * x + 1) * u * Math.PI) / (2 * n));
    }
    kernels.set(n, k);
  }
  return k;
}

/**
 * Writes the n x n samples of the block at `coeffs[o..o+63]` (quantised, natural order) to `out`
 * from `at`, rows `stride` apart. `q` is the block's quantisation table; `tmp` holds 64 values.
 * Samples are level-shifted; `out` rounds and clamps them.
 */
export function idctScaled(
  coeffs: Int16Array,
  o: number,
  q: Uint16Array,
  n: number,
  out: Uint8ClampedArray,
  at: number,
  stride: number,
  tmp: Float64Array,
): void {
  const dc = coeffs[o]! * q[0]!;
  let flat = true;
  for (let v = 0; v < n && flat; v++) for (let u = v === 0 ? 1 : 0; u < n; u++) if (coeffs[o + v * 8 + u] !== 0) flat = false;
  if (flat) {
    // DC only: the block is one level, dc/8 (C(0)^2/4 = 1/8).
    const level = dc / 8 + 128;
    for (let y = 0; y < n; y++) out.fill(level, at + y * stride, at + y * stride + n);
    return;
  }
  const k = kernel(n);
  for (let v = 0; v < n; v++) {
    const row = o + v * 8;
    let any = false;
    for (let u = 0; u < n; u++) if (coeffs[row + u] !== 0) any = true;
    if (!any) {
      tmp.fill(0, v * n, v * n + n);
      continue;
    }
    for (let x = 0; x < n; x++) {
      let s = 0;
      for (let u = 0; u < n; u++) s += k[x * n + u]! * coeffs[row + u]! * q[v * 8 + u]!;
      tmp[v * n + x] = s;
    }
  }
  for (let y = 0; y < n; y++) {
    const line = at + y * stride;
    for (let x = 0; x < n; x++) {
      let s = 128;
      for (let v = 0; v < n; v++) s += k[y * n + v]! * tmp[v * n + x]!;
      out[line + x] = s;
    }
  }
}

/** JFIF colour conversion in 16.16 fixed point, by chroma value. */
const FIX = 1 << 16;
const CR_R = new Int32Array(256);
const CB_B = new Int32Array(256);
const CB_G = new Int32Array(256);
const CR_G = new Int32Array(256);
for (let i = 0; i < 256; i++) {
  const c = i - 128;
  CR_R[i] = Math.round(1.402 * c * FIX);
  CB_B[i] = Math.round(1.772 * c * FIX);
  CB_G[i] = Math.round(-0.344136 * c * FIX);
  CR_G[i] = Math.round(-0.714136 * c * FIX);
}

/** Writes the RGB of one YCbCr sample (JFIF) at `out[o..o+2]`. */
export function ycbcrToRgb(out: Uint8ClampedArray, o: number, y: number, cb: number, cr: number): void {
  const base = y * FIX + FIX / 2;
  out[o] = (base + CR_R[cr]!) >> 16;
  out[o + 1] = (base + CB_G[cb]! + CR_G[cr]!) >> 16;
  out[o + 2] = (base + CB_B[cb]!) >> 16;
}
