/**
 * A small TIFF/EXIF writer for tests (TIFF 6.0 section 2): IFDs with typed values, pointers to
 * sub-IFDs, a next IFD (IFD1) and raw blobs (thumbnails), in either byte order.
 */

export const T = { BYTE: 1, ASCII: 2, SHORT: 3, LONG: 4, RATIONAL: 5, UNDEFINED: 7, SRATIONAL: 10 } as const;

export type TiffValue =
  | { tag: number; type: number; values: number[] } // numbers; rationals as [num, den, num, den...]
  | { tag: number; type: 2; text: string }
  | { tag: number; type: 7 | 1; bytes: Uint8Array }
  | { tag: number; ifd: Ifd } // LONG offset of a sub-IFD
  | { tag: number; blob: Uint8Array }; // LONG offset of raw bytes (e.g. JPEGInterchangeFormat)

export interface Ifd {
  entries: TiffValue[];
  next?: Ifd;
}

const SIZES: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 7: 1, 10: 8 };

/** Serialises `ifd0` (and everything it points to) as a TIFF block. */
export function buildTiff(ifd0: Ifd, littleEndian: boolean): Uint8Array {
  const out: number[] = [];
  const le = littleEndian;
  const put = (at: number, value: number, size: number) => {
    for (let i = 0; i < size; i++) {
      const shift = 8 * (le ? i : size - 1 - i);
      out[at + i] = Math.floor(value / 2 ** shift) & 0xff;
    }
  };
  const append = (bytes: ArrayLike<number>) => {
    if (out.length & 1) out.push(0);
    const at = out.length;
    for (let i = 0; i < bytes.length; i++) out.push(bytes[i]!);
    return at;
  };
  const encode = (v: TiffValue): { type: number; count: number; bytes: number[] } => {
    if ("text" in v) return { type: 2, count: v.text.length + 1, bytes: [...new TextEncoder().encode(v.text), 0] };
    if ("bytes" in v) return { type: v.type, count: v.bytes.length, bytes: [...v.bytes] };
    if ("values" in v) {
      const size = SIZES[v.type]!;
      const unit = v.type === 5 || v.type === 10 ? 4 : size;
      const bytes: number[] = [];
      for (const n of v.values) {
        const start = bytes.length;
        for (let i = 0; i < unit; i++) bytes.push(0);
        const tmp: number[] = [];
        for (let i = 0; i < unit; i++) tmp.push(Math.floor((n >>> 0) / 2 ** (8 * (le ? i : unit - 1 - i))) & 0xff);
        bytes.splice(start, unit, ...tmp);
      }
      return { type: v.type, count: bytes.length / size, bytes };
    }
    return { type: 4, count: 1, bytes: [0, 0, 0, 0] }; // patched once the target is written
  };
  const writeIfd = (ifd: Ifd): number => {
    const entries = [...ifd.entries].sort((a, b) => a.tag - b.tag);
    if (out.length & 1) out.push(0);
    const at = out.length;
    for (let i = 0; i < 2 + entries.length * 12 + 4; i++) out.push(0);
    put(at, entries.length, 2);
    entries.forEach((v, i) => {
      const e = at + 2 + i * 12;
      const { type, count, bytes } = encode(v);
      put(e, v.tag, 2);
      put(e + 2, type, 2);
      put(e + 4, count, 4);
      if ("ifd" in v) put(e + 8, writeIfd(v.ifd), 4);
      else if ("blob" in v) put(e + 8, append(v.blob), 4);
      else if (bytes.length <= 4) bytes.forEach((byte, k) => (out[e + 8 + k] = byte));
      else put(e + 8, append(bytes), 4);
    });
    if (ifd.next) put(at + 2 + entries.length * 12, writeIfd(ifd.next), 4);
    return at;
  };
  out.push(...(le ? [0x49, 0x49] : [0x4d, 0x4d]), 0, 0, 0, 0, 0, 0);
  put(2, 42, 2);
  put(4, writeIfd(ifd0), 4);
  return Uint8Array.from(out);
}

/** Strings planted in the camera EXIF that must never survive sanitising. */
export const SECRETS = {
  software: "SecretSoftware 9.9",
  artist: "Jane Private Artist",
  bodySerial: "BODYSERIAL-0451-XYZ",
  owner: "Owner Name Hidden",
  lensSerial: "LENSSERIAL-7781-ABC",
  userComment: "USERCOMMENT-private-note",
  makerNote: "MAKERNOTE-vendor-blob-\u0001\u0002\u0003",
  thumbnail: "THUMBNAIL-BYTES-NOT-A-REAL-JPEG",
} as const;

/**
 * EXIF as a phone or camera writes it: IFD0 (Make, Model, Orientation, Software, Artist), an
 * Exif IFD (exposure data, MakerNote, serial numbers, UserComment), a GPS IFD, an Interop IFD and
 * an IFD1 pointing at a thumbnail.
 */
export function cameraExif(littleEndian: boolean, orientation = 6): Uint8Array {
  const ascii = (text: string) => new TextEncoder().encode(text);
  const exifIfd: Ifd = {
    entries: [
      { tag: 0x829a, type: T.RATIONAL, values: [1, 125] }, // ExposureTime
      { tag: 0x829d, type: T.RATIONAL, values: [28, 10] }, // FNumber
      { tag: 0x8822, type: T.SHORT, values: [2] }, // ExposureProgram
      { tag: 0x8827, type: T.SHORT, values: [400] }, // ISO
      { tag: 0x9003, type: T.ASCII, text: "2024:05:06 07:08:09" }, // DateTimeOriginal
      { tag: 0x9004, type: T.ASCII, text: "2024:05:06 07:08:09" }, // DateTimeDigitized: not kept
      { tag: 0x920a, type: T.RATIONAL, values: [4500, 1000] }, // FocalLength
      { tag: 0x927c, type: T.UNDEFINED, bytes: ascii(SECRETS.makerNote) }, // MakerNote
      { tag: 0x9286, type: T.UNDEFINED, bytes: ascii(`ASCII\0\0\0${SECRETS.userComment}`) }, // UserComment
      { tag: 0xa005, ifd: { entries: [{ tag: 0x0001, type: T.ASCII, text: "R98" }] } }, // Interop IFD
      { tag: 0xa403, type: T.SHORT, values: [1] }, // WhiteBalance
      { tag: 0xa405, type: T.SHORT, values: [26] }, // FocalLengthIn35mmFilm
      { tag: 0xa430, type: T.ASCII, text: SECRETS.owner }, // CameraOwnerName
      { tag: 0xa431, type: T.ASCII, text: SECRETS.bodySerial }, // BodySerialNumber
      { tag: 0xa433, type: T.ASCII, text: "LensCo" }, // LensMake
      { tag: 0xa434, type: T.ASCII, text: "LensCo 24-70mm F2.8" }, // LensModel
      { tag: 0xa435, type: T.ASCII, text: SECRETS.lensSerial }, // LensSerialNumber
    ],
  };
  const gpsIfd: Ifd = {
    entries: [
      { tag: 0x0001, type: T.ASCII, text: "N" },
      { tag: 0x0002, type: T.RATIONAL, values: [52, 1, 22, 1, 3125, 100] }, // GPSLatitude
      { tag: 0x0003, type: T.ASCII, text: "E" },
      { tag: 0x0004, type: T.RATIONAL, values: [4, 1, 53, 1, 4321, 100] }, // GPSLongitude
    ],
  };
  const ifd1: Ifd = {
    entries: [
      { tag: 0x0103, type: T.SHORT, values: [6] },
      { tag: 0x0201, blob: ascii(SECRETS.thumbnail) }, // JPEGInterchangeFormat
      { tag: 0x0202, type: T.LONG, values: [SECRETS.thumbnail.length] },
    ],
  };
  return buildTiff(
    {
      entries: [
        { tag: 0x010f, type: T.ASCII, text: "Acme Cameras" }, // Make
        { tag: 0x0110, type: T.ASCII, text: "Acme X100\0\0" }, // Model, NUL padded
        { tag: 0x0112, type: T.SHORT, values: [orientation] },
        { tag: 0x0131, type: T.ASCII, text: SECRETS.software },
        { tag: 0x013b, type: T.ASCII, text: SECRETS.artist },
        { tag: 0x8769, ifd: exifIfd },
        { tag: 0x8825, ifd: gpsIfd },
      ],
      next: ifd1,
    },
    littleEndian,
  );
}
