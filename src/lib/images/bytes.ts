/** Byte helpers shared by the image parsers: bounds-aware readers, CRC-32 and an output sink. */

export const u16be = (b: Uint8Array, o: number): number => (b[o]! << 8) | b[o + 1]!;
export const u16le = (b: Uint8Array, o: number): number => b[o]! | (b[o + 1]! << 8);
export const u32be = (b: Uint8Array, o: number): number => ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
export const u32le = (b: Uint8Array, o: number): number => (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;

/** Latin-1 view of `len` bytes, for four-character codes and signatures. */
export function ascii(b: Uint8Array, o: number, len: number): string {
  let s = "";
  for (let i = o; i < o + len && i < b.length; i++) s += String.fromCharCode(b[i]!);
  return s;
}

export function startsWith(b: Uint8Array, o: number, sig: string): boolean {
  if (o + sig.length > b.length) return false;
  for (let i = 0; i < sig.length; i++) if (b[o + i] !== sig.charCodeAt(i)) return false;
  return true;
}

let crcTable: Uint32Array | undefined;

/** CRC-32 (ISO-HDLC, as PNG uses) of `data`. */
export function crc32(data: Uint8Array): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  const t = crcTable;
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) c = t[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/**
 * Collects the output as views into the input plus small new pieces, so that kept data is copied
 * exactly once, into the final buffer. When nothing was removed the views merge back into one
 * view of the whole input and no copy is made at all.
 */
export class ByteSink {
  private readonly parts: Uint8Array[] = [];
  length = 0;

  push(part: Uint8Array): void {
    if (part.length === 0) return;
    const last = this.parts[this.parts.length - 1];
    if (last && last.buffer === part.buffer && last.byteOffset + last.length === part.byteOffset) {
      this.parts[this.parts.length - 1] = new Uint8Array(last.buffer, last.byteOffset, last.length + part.length);
    } else {
      this.parts.push(part);
    }
    this.length += part.length;
  }

  finish(): Uint8Array {
    if (this.parts.length === 1) return this.parts[0]!;
    const out = new Uint8Array(this.length);
    let o = 0;
    for (const p of this.parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }
}
