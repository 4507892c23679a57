/**
 * Checks that every frame of a GIF decodes (GIF89a section 22 and appendix F), without keeping a
 * pixel: photon decodes a GIF's first frame only, so the frames after it are checked here. Memory
 * beyond one frame's compressed data is the 4,096-entry table of string lengths.
 */
import { ByteSink, u16le } from "./bytes";
import { ImageStructureError } from "./exif";

function fail(why: string): never {
  throw new ImageStructureError(`GIF: ${why}`);
}

const colorTableSize = (packed: number) => (packed & 0x80 ? 3 * (1 << ((packed & 0x07) + 1)) : 0);

/** The data of the chain of sub-blocks at `pos`, and the position after its terminator. */
function subBlockData(b: Uint8Array, pos: number): { data: Uint8Array; end: number } {
  const sink = new ByteSink();
  for (;;) {
    if (pos >= b.length) fail("truncated data sub-blocks");
    const size = b[pos]!;
    if (pos + 1 + size > b.length) fail("truncated data sub-blocks");
    if (size === 0) return { data: sink.finish(), end: pos + 1 };
    sink.push(b.subarray(pos + 1, pos + 1 + size));
    pos += 1 + size;
  }
}

/**
 * Runs the LZW decoder over one frame's data, counting the pixels it would produce. Throws on a
 * code that is neither in the table nor the next one to be added, and on data that ends (or
 * reaches its end code) before `pixels` pixels; pixels past those are ignored, as decoders do.
 */
function checkLzw(data: Uint8Array, minCodeSize: number, pixels: number, frame: number): void {
  const clear = 1 << minCodeSize;
  const end = clear + 1;
  const lengths = new Uint16Array(4096);
  lengths.fill(1, 0, clear);
  let size = minCodeSize + 1;
  let next = end + 1;
  let previous = -1;
  let produced = 0;
  let bitPos = 0;
  const totalBits = data.length * 8;
  while (produced < pixels) {
    if (bitPos + size > totalBits) fail(`frame ${frame} ends after ${produced} of ${pixels} pixels`);
    let code = 0;
    for (let i = 0; i < size; i++, bitPos++) code |= ((data[bitPos >> 3]! >> (bitPos & 7)) & 1) << i;
    if (code === clear) {
      size = minCodeSize + 1;
      next = end + 1;
      previous = -1;
      continue;
    }
    if (code === end) fail(`frame ${frame} ends after ${produced} of ${pixels} pixels`);
    if (previous < 0) {
      if (code >= clear) fail(`frame ${frame} starts with the code ${code}, which is not a literal`);
      produced += 1;
    } else {
      if (code > next || (code === next && next >= 4096)) fail(`frame ${frame} has the invalid code ${code}`);
      if (next < 4096) {
        lengths[next] = Math.min(lengths[previous]! + 1, 0xffff);
        next++;
        if (next === 1 << size && size < 12) size++;
      }
      produced += lengths[code]!;
    }
    previous = code;
  }
}

/** Throws `ImageStructureError` unless the LZW data of every frame decodes to the frame's size. */
export function checkGifFrames(b: Uint8Array): void {
  if (b.length < 13) fail("truncated header");
  let pos = 13 + colorTableSize(b[10]!);
  let frame = 0;
  for (;;) {
    if (pos >= b.length) fail("truncated before the trailer");
    const introducer = b[pos]!;
    if (introducer === 0x3b) return;
    if (introducer === 0x21) {
      if (pos + 2 > b.length) fail("truncated extension");
      pos = subBlockData(b, pos + 2).end;
    } else if (introducer === 0x2c) {
      if (pos + 10 > b.length) fail("truncated image descriptor");
      const pixels = u16le(b, pos + 5) * u16le(b, pos + 7);
      pos += 10 + colorTableSize(b[pos + 9]!);
      if (pos >= b.length) fail("truncated image");
      const minCodeSize = b[pos]!;
      if (minCodeSize < 1 || minCodeSize > 11) fail("bad LZW code size");
      const { data, end } = subBlockData(b, pos + 1);
      checkLzw(data, minCodeSize, pixels, ++frame);
      pos = end;
    } else {
      fail(`unknown block 0x${introducer.toString(16)}`);
    }
  }
}
