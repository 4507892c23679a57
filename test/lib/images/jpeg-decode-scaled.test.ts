import { describe, expect, it } from "vitest";
import { ImageStructureError } from "../../../src/lib/images/exif";
import { decodeJpegScaled, decodeJpegScaledInBands, type JpegScale, jpegScaleFor } from "../../../src/lib/images/jpeg-decode-scaled";
import { encodeBaselineJpeg, IDENTITY_ORDER, IDENTITY_SIGN } from "../../../src/lib/images/jpeg-encode";
import type { Raster } from "../../../src/lib/images/raster";
import { encodeJpeg } from "../../support/image-fixtures-jpeg";
import { decodeJpegCoefficients } from "../../support/jpeg-coefficients";

const W = 72;
const H = 56;
const SCALES: JpegScale[] = [1, 2, 4, 8];
type Rgb = [number, number, number];

/**
 * The picture every fixture holds: quadrants red, green, blue, yellow split at (32, 32), a multiple
 * of every MCU size (so no block straddles two colours), under a gentle diagonal gradient.
 */
function pattern(x: number, y: number): Rgb {
  const bases: Rgb[] = [
    [220, 40, 40],
    [40, 200, 60],
    [50, 70, 220],
    [230, 210, 50],
  ];
  const b = bases[(x < 32 ? 0 : 1) + (y < 32 ? 0 : 2)]!;
  const g = Math.round(((x + y) / (W + H)) * 60);
  return [Math.min(255, b[0] + g), Math.min(255, b[1] + g), Math.max(0, b[2] - g)];
}
const luma = ([r, g, b]: Rgb): number => 0.299 * r + 0.587 * g + 0.114 * b;

/**
 * Written by libjpeg-turbo's cjpeg 2.1.5 from `pattern()` at quality 90: the default progressive
 * script (spectral selection and successive approximation); 4:2:2 with a restart every MCU row;
 * greyscale; a script that codes luma bands 1-4 and 5-63 in separate scans (both refined); and a
 * sequential file with one scan per component.
 */
const CJPEG: Record<string, string> = {
  "420-progressive":
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wgARCAA4AEgDASIAAhEBAxEB/8QAGgABAQEAAwEAAAAAAAAAAAAAAAMCAQYIB//EABwBAAEEAwEAAAAAAAAAAAAAAAQBAgYIAAMFB//aAAwDAQACEAMQAAAB6pRSG+8qKCu7ztTiUtUUFcUDr8ropLbnqKCu7xRTiUtUUFUoGd8aopb6cqNiu9M6bpDNWnA7A1r5ZoXshe6ArvTWikUy4GrATP/EABcQAQEBAQAAAAAAAAAAAAAAAAEwEFD/2gAIAQEAAQUC4gYEAgEf/8QAFREBAQAAAAAAAAAAAAAAAAAAATD/2gAIAQMBAT8BosP/xAAXEQEBAQEAAAAAAAAAAAAAAAACAAEQ/9oACAECAQE/AUpKSkrVJSUlJWqSkpK3eLZbb3//xAAUEAEAAAAAAAAAAAAAAAAAAABQ/9oACAEBAAY/An//xAAYEAEBAQEBAAAAAAAAAAAAAAABABAxIP/aAAgBAQABPyEIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIMAwCCCC5gYBBBBc8AQQQXPH//aAAwDAQACAAMAAAAQ/wCnuDemuGwuhmRfAfgPPv/EABcRAQEBAQAAAAAAAAAAAAAAAAEAEBH/2gAIAQMBAT8QCCCC5BBBBcggwXuES7//xAAYEQEBAQEBAAAAAAAAAAAAAAABACAhEP/aAAgBAgEBPxDGZ0yZ9M4ayTTZfP/EABkQAAMBAQEAAAAAAAAAAAAAAAEQEUEgAP/aAAgBAQABPxB/5jj/ADHH+Y4/zC5rzC5rzC5rzC5rzC58+dPZjgACH09mOMAIdPZhc0ARx//Z",
  "422-progressive-restart":
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wgARCAA4AEgDASEAAhEBAxEB/8QAGgABAAMBAQEAAAAAAAAAAAAAAwACBgEIBf/EABwBAAEFAQEBAAAAAAAAAAAAAAQBAgUGBwgAA//dAAQABf/aAAwDAQACEAMQAAAByiVDeUQVd7eD4uRBlSDO/9DMJS96RBV3iQfFqIM5IM7/0c4lG3pEFdvEhOLUQRyQdf/S+AlB3tEFdvEhOLUQRyQdf//TyaabDIgq+nLcQXe9h2cnx9//1MumkQyXFd6bvxDdbcHZIxf/1c2mhw90Fd6atxFcuT4+kT3/xAAYEAEBAAMAAAAAAAAAAAAAAAABMAAQIP/dAAQACf/aAAgBAQABBQKP/9CP/9GP/9KP/9MNB3//1MCH/9UI/wD/xAAUEQEAAAAAAAAAAAAAAAAAAAAg/90ABAAF/9oACAEDAQE/AT//0D//0T//0j//0z//1D//1T//xAAXEQEBAQEAAAAAAAAAAAAAAAABAAIQ/9oACAECAQE/AdNptNplv//Q02m02mW//9HTabTaZb//0tNptNplv//T02m0y8//1NNptM8//9XTaZe//8QAFBABAAAAAAAAAAAAAAAAAAAAMP/dAAQACf/aAAgBAQAGPwIf/9Af/9Ef/9If/9Mf/9Qf/9Uf/8QAGBABAQEBAQAAAAAAAAAAAAAAAQAQMSD/2gAIAQEAAT8hCCCCCCCCC//QCCCCCCCCC//RCCCCCCCCC//SCCCCCCCCC//TgMAggguZ/9QMAgggub//1YCCCC54/90ABAAF/9oADAMBAAIAAwAAABDNbQ//0Mn5z//R1dYf/9KYmh//08FQ7//UlIfv/9UcDO//xAAXEQEBAQEAAAAAAAAAAAAAAAABABAx/9oACAEDAQE/ECIjP//QIiIv/9EiIz//0iIjP//TIllz/9Qxbuf/1SJd/8QAGBEAAwEBAAAAAAAAAAAAAAAAAAEgECH/2gAIAQIBAT8QgA6H/9CADof/0YAOh//SgA6H/9OAJs//1NAfP//V0JvP/8QAGRAAAwEBAQAAAAAAAAAAAAAAARARQQAg/90ABAAJ/9oACAEBAAE/EH/mPH+YX//QX5jx/mFz7//R7zC5rzC5r//SzC5rzC5v/wD/00dOzHgACF//1O6dmPGAEP8A/9WnZhc0AR4//9k=",
  "gray-progressive":
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/wgALCAA4AEgBAREA/8QAGgABAAIDAQAAAAAAAAAAAAAAAwIGAAcIAf/aAAgBAQAAAAGqIiX2aImq0RL4iImq0RL4iImq0RL4iImmkROnJTl5yqiT6bnLzOWUmnTUvMz/xAAXEAEBAQEAAAAAAAAAAAAAAAABMBBQ/9oACAEBAAEFAuIGBAIBH//EABQQAQAAAAAAAAAAAAAAAAAAAFD/2gAIAQEABj8Cf//EABgQAQEBAQEAAAAAAAAAAAAAAAEAEDEg/9oACAEBAAE/IQgggggggggggggggggggggggggggggggggggwDAIIILmBgEEEFzwBBBBc8f/9oACAEBAAAAEPd3d1VMTMzP/8QAGRAAAwEBAQAAAAAAAAAAAAAAARARQSAA/9oACAEBAAE/EH/mOP8AMcf5jj/MLmvMLmvMLmvMLmvMLnz509mOAAIfT2Y4wAh09mFzQBHH/9k=",
  "420-progressive-split-bands":
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wgARCAA4AEgDASIAAhEBAxEB/8QAGgABAQEAAwEAAAAAAAAAAAAAAAMCAQYIB//EABwBAAEEAwEAAAAAAAAAAAAAAAQBAgYIAAMFB//aAAwDAQACEAMQAAAB6pRSG+8qKCu7ztTiUtUUFcUDr8ropLbnqKCu7xRTiUtUUFUoGd8aopb6cqNiu9M6bpDNWnA7A1r5ZoXshe6ArvTWikUy4GrATP/EABgQAQEBAQEAAAAAAAAAAAAAAAEAAjEQ/9oACAEBAAEEAQgggggggggggggggggggggggggggggggggggs5gs5gggguQWcwQQQXPM5ggggue/wD/xAAUEAEAAAAAAAAAAAAAAAAAAABQ/9oACAEBAAU/AX//xAAZEQEBAQEBAQAAAAAAAAAAAAADAAECIRD/2gAIAQIBAT8AVZElWRLpPZElWRJVuk9lWRJEu+7dk62Xrbvdt35//8QAGBEBAQEBAQAAAAAAAAAAAAAAAQARAhD/2gAIAQMBAT8ACCCCyCCCCyCC66l3wiX3/9oADAMBAAIAAwAAABD/AKe4N6a4bC6GZF8B+A8+/8QAGRAAAwEBAQAAAAAAAAAAAAAAARARIABA/9oACAEBAAEEEPD/AP8A/wD/APN/zf8AN/zf88edMYADdMeADUXz4Aw//8QAGBABAQEBAQAAAAAAAAAAAAAAASAhEDD/2gAIAQEABT8Q7hGEYRhGEYRhGHhhBGEEYQR//9k=",
  "420-three-sequential-scans":
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wAARCAA4AEgDASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/9oACAEBAAA/APKkSrCJVhEqwidhXvKJU6JVhEqwidhU6JXywiVYRKsInYVOiV7yiVYRKsInYVOiVZRMV8rolWETsKnRKsomK94RKsInYVOiVZRMVOiV8sInYVOiVZRMVOiV7yidhU6JVlExU6JVhEr42jjqwiVPHHmrCJ2Ffpwq1Kq1Kq1IBtFJX5VolTxx5qwidhU6JX6bKtSqtSAbRSUV+WUceasInYVOiVYRMV+marUgG0UlFFf/xAAfAQADAQEBAQEBAQEBAAAAAAAAAQIDBAUGBwgJCgv/xAC1EQACAQIEBAMEBwUEBAABAncAAQIDEQQFITEGEkFRB2FxEyIygQgUQpGhscEJIzNS8BVictEKFiQ04SXxFxgZGiYnKCkqNTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqCg4SFhoeIiYqSk5SVlpeYmZqio6Slpqeoqaqys7S1tre4ubrCw8TFxsfIycrS09TV1tfY2dri4+Tl5ufo6ery8/T19vf4+fr/2gAIAQIRAD8A/HKtU8upUPiatU8qpUPPlU1P1upUPLq1T4ipUPMq1TzZVNT/AF8q1Ty6lQ/xCqVDz5zOds/3YqSZ5lWTP8RJtnK2I//aAAgBAxEAPwD+80i0j/FtI0SLsf7OpGiR/i2kWkXY/ckjRI/a5SMW7jPxhFo/ZGwA/9k=",
};

/**
 * A textured 40x24 greyscale picture (hashed noise over waves), so that every frequency band carries
 * data, written by the same cjpeg at quality 90 as baseline and with the default progressive script:
 * the two hold the same coefficients.
 */
const TEXTURE = {
  baseline:
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/wAALCAAYACgBAREA/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/9oACAEBAAA/AOh8E+LdI8G3mnx6m6RW8cigyo5kFxHNEE2KAd77tpKuSMDK8bSo0vFfxO03xLoUWnwwCdPKa98gMrmSRvNjkzIpw4yAN+GB3ncOBt8N1nwAviCS423UVo811CFgVw7pFENiCVY96yBlflWZR029SDBpHhCXw9LbRQsJPsX7+Myu0i3KQyTIpjZwM7VUM5RguASNuXNfQmg/E6zsruLTr2+XzLCeMWsjbsh1ZSYi5VCerR5w338leMj59+I8PiGWW9utPkZzHE9qkNhcEW4MhKBIlR/kiRWhZwyKW8pTgZJrE8AatqN9NaRaqqag6XccSxTrK8jSzZjMM0rZDSeWwZWUNgJyQNgP1L4V0LTbvUrZYZhE5jNwyy3IuVtGDqSkflgrEoO3LMBkRoOOd2j8ULNLmZ7z7RbXVmlvHFcopRRarJlmbazFA/Ee0kDdlFI+VxXyZ4zlksZ9StniDSLKPMlgu50LtJIFm7ZUb0UhtpJULknIB9fl+HmpeLLfISaS/wDKmgvmtbiKNIndwkcJkP8AFgpzIN/ykZ5yuh4j+Eo0mVdTtoLthelxbh3gi8uAkA4iPC/LOEUlg+XGVOQK5DVvif8AY777G0Hk2zyi9ma8u3fIRGXYfMKsTtOeoJTbnAcVb0r4pT+MtO0oR3N7BNLPAl3ApdZYbMfLI7HhGQ9Qyoo4Yksw3Vu6D8J5Z9X026ummuJbqFZxMPLWXASUFGX7qL+8ZQNwYLHIA4wor//Z",
  progressive:
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/wgALCAAYACgBAREA/8QAGQAAAgMBAAAAAAAAAAAAAAAABAcCBQYD/9oACAEBAAAAAbAnDQYS+BaZCm15FR1P/8QAGxAAAwEBAQEBAAAAAAAAAAAAAQMEAgUSExT/2gAIAQEAAQUCirVHurprpQ6D9BVIZyjp4xroigmBrNmVC9M6mPRsJwTz2V5o5PyLen42rqGxaOSS3//EACsQAAEDAwMCAwkAAAAAAAAAAAECERIAAyExQVEi0WFxwRMjMmKBkaHh8P/aAAgBAQAGPwK2LmEg66yBFC2A+Jtycg5pXUEuoY8By2tJAzDIfMmJ0oW1rygiJ9PSlqtnQRZCunPHhp9qSLvvOoBi7ucMTy1JYtiWVSj5Np+qnJKkRAV8r/wq4lsvkhR3Oa3K2IXFQDcB+9e0SFdfw6Bh5fWoMyXmZq71aZSwSRIbhG9W1KdRUHfD79/wa//EACAQAQADAAIDAQADAAAAAAAAAAERITEAQVFhcYGRocH/2gAIAQEAAT8hbEAo4KDtmKfzqORw8rRkwN+3t+hgNjllKCEiQ4p644PkiAUk+Alhj5fDI21Oiag99tzjhGQ+sQBoC2QmHDcEEFLVtkkSc+cLp1hAclYDLfD9BYEAQRssLE9PNHTxnSFDywfNhcZHMZNchLHtZ5V/Ec3az/kqiXN5y9TpKuCRhz+o88hwbOTEnpPYHet8Z8nmxRMCxsxZnP/aAAgBAQAAABDitf/EABoQAQEBAQEBAQAAAAAAAAAAAAERIQAxQVH/2gAIAQEAAT8QGHgvAMw+4qkLigTnO06IkNAyG4w5MDgU/OSaQPPpE/nrOMQSwKUCmn0HxtAYW1faT6uKN4VqApOb4VVQq9addbJUiABBtCUVDoGUzIidAUHN5TSTiooBzRDTGPGXBr5HwouKKKWg3BJoX2L8Ox7F28IXmRfUGPMLIs1UO8QvY5c0jV9F2geK134ppY30CxKHA4ERhDfyIEAAYO//2Q==",
};

const fromBase64 = (s: string): Uint8Array => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

const COS = Float64Array.from(
  { length: 64 },
  (_, i) => ((i % 8 === 0 ? Math.SQRT1_2 : 1) / 2) * Math.cos(((2 * (i >> 3) + 1) * (i % 8) * Math.PI) / 16),
);

/** Forward DCT (T.81 A.3.3) of 8x8 level-shifted samples; COS[x * 8 + u]. */
function fdct(s: Float64Array): Float64Array {
  const tmp = new Float64Array(64);
  const out = new Float64Array(64);
  for (let y = 0; y < 8; y++) for (let u = 0; u < 8; u++) for (let x = 0; x < 8; x++) tmp[y * 8 + u]! += COS[x * 8 + u]! * s[y * 8 + x]!;
  for (let v = 0; v < 8; v++) for (let u = 0; u < 8; u++) for (let y = 0; y < 8; y++) out[v * 8 + u]! += COS[y * 8 + v]! * tmp[y * 8 + u]!;
  return out;
}

interface BuildOptions {
  /** Components hold R, G, B: named "R", "G", "B", or announced by an Adobe APP14 segment with transform 0. */
  rgb?: "ids" | "adobe";
}

/**
 * A baseline JPEG of `pattern()` whose components have the sampling factors `sampling` (one entry:
 * greyscale; four: an extra plane, as CMYK would have). Chroma is averaged over the pixels each
 * sample covers; every coefficient is quantised by 2.
 */
function build(sampling: [number, number][], options: BuildOptions = {}): Uint8Array {
  const hmax = Math.max(...sampling.map((s) => s[0]));
  const vmax = Math.max(...sampling.map((s) => s[1]));
  const mcusX = Math.ceil(W / (8 * hmax));
  const mcusY = Math.ceil(H / (8 * vmax));
  const value = (ci: number, x: number, y: number): number => {
    const [r, g, b] = pattern(Math.min(x, W - 1), Math.min(y, H - 1));
    if (options.rgb) return [r, g, b][ci] ?? 128;
    return [luma([r, g, b]), -0.168736 * r - 0.331264 * g + 0.5 * b + 128, 0.5 * r - 0.418688 * g - 0.081312 * b + 128][ci] ?? 128;
  };
  const components = sampling.map(([h, v], ci) => {
    const sx = hmax / h;
    const sy = vmax / v;
    const bw = mcusX * h;
    const bh = mcusY * v;
    const coeffs = new Int16Array(bw * bh * 64);
    for (let by = 0; by < bh; by++) {
      for (let bx = 0; bx < bw; bx++) {
        const s = new Float64Array(64);
        for (let i = 0; i < 64; i++) {
          const cx = (bx * 8 + (i & 7)) * sx;
          const cy = (by * 8 + (i >> 3)) * sy;
          let sum = 0;
          for (let dy = 0; dy < sy; dy++) for (let dx = 0; dx < sx; dx++) sum += value(ci, cx + dx, cy + dy);
          s[i] = sum / (sx * sy) - 128;
        }
        const f = fdct(s);
        for (let i = 0; i < 64; i++) coeffs[(by * bw + bx) * 64 + i] = Math.round(f[i]! / 2);
      }
    }
    const id = options.rgb === "ids" ? "RGB".charCodeAt(ci) : ci + 1;
    return { id, h, v, tq: 0, coeffs, blockOffset: (x: number, y: number) => (y * bw + x) * 64 };
  });
  const adobe = Uint8Array.of(0xff, 0xee, 0, 14, 0x41, 0x64, 0x6f, 0x62, 0x65, 0, 100, 0, 0, 0, 0, 0);
  return encodeBaselineJpeg({
    width: W,
    height: H,
    components,
    quantTables: [new Uint16Array(64).fill(2)],
    order: IDENTITY_ORDER,
    sign: IDENTITY_SIGN,
    segments: options.rgb === "adobe" ? [adobe] : [],
  });
}

const FIXTURES: Record<string, () => Uint8Array> = {
  "4:4:4": () =>
    build([
      [1, 1],
      [1, 1],
      [1, 1],
    ]),
  "4:2:2": () =>
    build([
      [2, 1],
      [1, 1],
      [1, 1],
    ]),
  "4:2:0": () =>
    build([
      [2, 2],
      [1, 1],
      [1, 1],
    ]),
  "4:4:0": () =>
    build([
      [1, 2],
      [1, 1],
      [1, 1],
    ]),
  "4:1:1": () =>
    build([
      [4, 1],
      [1, 1],
      [1, 1],
    ]),
  "luma 2x2, Cb 1x2, Cr 2x1": () =>
    build([
      [2, 2],
      [1, 2],
      [2, 1],
    ]),
  greyscale: () => build([[1, 1]]),
  "RGB named R, G, B": () =>
    build(
      [
        [1, 1],
        [1, 1],
        [1, 1],
      ],
      { rgb: "ids" },
    ),
  "RGB per Adobe APP14": () =>
    build(
      [
        [1, 1],
        [1, 1],
        [1, 1],
      ],
      { rgb: "adobe" },
    ),
  "4:4:4 restart every 2 MCUs": () => encodeJpeg(W, H, pattern, { restartInterval: 2 }),
  "4:4:4 progressive (spectral selection)": () => encodeJpeg(W, H, pattern, { progressive: true }),
  ...Object.fromEntries(Object.entries(CJPEG).map(([name, b64]) => [`cjpeg ${name}`, () => fromBase64(b64)])),
};

const at = (r: Raster, x: number, y: number): Rgb => [...r.pixels.subarray((y * r.width + x) * 3, (y * r.width + x) * 3 + 3)] as Rgb;

/** Mean of `pattern()` over the s x s pixels that output pixel (x, y) stands for. */
function cellMean(x: number, y: number, s: number, grey: boolean): Rgb {
  const sum: Rgb = [0, 0, 0];
  let n = 0;
  for (let yy = y * s; yy < Math.min((y + 1) * s, H); yy++) {
    for (let xx = x * s; xx < Math.min((x + 1) * s, W); xx++, n++) {
      const p = pattern(xx, yy);
      const q = grey ? ([luma(p), luma(p), luma(p)] as Rgb) : p;
      for (let c = 0; c < 3; c++) sum[c]! += q[c]!;
    }
  }
  return sum.map((v) => v / n) as Rgb;
}

/** Full-size reference decode: float inverse DCT (A.3.3), nearest-neighbour chroma, JFIF colour. */
function reference(bytes: Uint8Array, rgb = false): Raster {
  const d = decodeJpegCoefficients(bytes);
  const planes = d.components.map((c) => {
    const q = d.quantTables[c.tq]!;
    const pw = c.blocksWide * 8;
    const plane = new Float64Array(pw * c.blocksHigh * 8);
    for (let by = 0; by < c.blocksHigh; by++) {
      for (let bx = 0; bx < c.blocksWide; bx++) {
        for (let i = 0; i < 64; i++) {
          const [y, x] = [i >> 3, i & 7];
          let s = 128;
          for (let k = 0; k < 64; k++)
            s += COS[y * 8 + (k >> 3)]! * COS[x * 8 + (k & 7)]! * c.coeffs[(by * c.blocksWide + bx) * 64 + k]! * q[k]!;
          plane[(by * 8 + y) * pw + bx * 8 + x] = s;
        }
      }
    }
    return (x: number, y: number): number => plane[Math.floor((y * c.v) / d.vmax) * pw + Math.floor((x * c.h) / d.hmax)]!;
  });
  const clamp = (v: number): number => Math.max(0, Math.min(255, Math.round(v)));
  const pixels = new Uint8Array(d.width * d.height * 3);
  for (let y = 0; y < d.height; y++) {
    for (let x = 0; x < d.width; x++) {
      const [a, b, c] = planes.map((p) => p(x, y)) as [number, number?, number?];
      const o = (y * d.width + x) * 3;
      const rgbOut =
        b === undefined
          ? [a, a, a]
          : rgb
            ? [a, b, c!]
            : [a + 1.402 * (c! - 128), a - 0.344136 * (b - 128) - 0.714136 * (c! - 128), a + 1.772 * (b - 128)];
      pixels.set(rgbOut.map(clamp), o);
    }
  }
  return { width: d.width, height: d.height, channels: 3, pixels };
}

const maxDiff = (a: Raster, b: Raster): number => {
  expect([a.width, a.height]).toEqual([b.width, b.height]);
  let m = 0;
  for (let i = 0; i < a.pixels.length; i++) m = Math.max(m, Math.abs(a.pixels[i]! - b.pixels[i]!));
  return m;
};

/** Fills the entropy-coded data of the scans `pick` selects with 0xFF 0x00 pairs: all one bits, never a Huffman code. */
function corruptScans(bytes: Uint8Array, pick: (componentIds: number[], ss: number, se: number) => boolean): Uint8Array {
  const b = bytes.slice();
  let i = 2;
  while (i + 4 <= b.length && b[i + 1] !== 0xd9) {
    const length = (b[i + 2]! << 8) | b[i + 3]!;
    if (b[i + 1] !== 0xda) {
      i += 2 + length;
      continue;
    }
    const ns = b[i + 4]!;
    const ids = Array.from({ length: ns }, (_, k) => b[i + 5 + 2 * k]!);
    let end = i + 2 + length;
    while (end + 1 < b.length && !(b[end] === 0xff && b[end + 1] !== 0 && (b[end + 1]! & 0xf8) !== 0xd0)) end++;
    if (pick(ids, b[i + 5 + 2 * ns]!, b[i + 6 + 2 * ns]!)) for (let p = i + 2 + length; p + 1 < end; p += 2) b.set([0xff, 0], p);
    i = end;
  }
  return b;
}

const sofAt = (b: Uint8Array): number => b.findIndex((x, i) => x === 0xff && b[i + 1] === 0xc0);

describe("decodeJpegScaled", () => {
  for (const [name, make] of Object.entries(FIXTURES)) {
    it(`${name}: the pattern at 1/1, 1/2, 1/4 and 1/8`, () => {
      const bytes = make();
      const grey = decodeJpegCoefficients(bytes).components.length === 1;
      for (const s of SCALES) {
        const r = decodeJpegScaled(bytes, s);
        expect([r.width, r.height, r.channels]).toEqual([Math.ceil(W / s), Math.ceil(H / s), 3]);
        let worst = 0;
        let total = 0;
        for (let y = 0; y < r.height; y++) {
          for (let x = 0; x < r.width; x++) {
            const want = cellMean(x, y, s, grey);
            const got = at(r, x, y);
            const d = Math.max(...got.map((v, c) => Math.abs(v - want[c]!)));
            worst = Math.max(worst, d);
            total += d;
          }
        }
        // At 1/8 a 4:1:1 chroma value is the mean of 32 x 8 pixels of the gradient, not of the cell.
        const meanLimit = name === "4:1:1" && s === 8 ? 7 : 4;
        expect(total / (r.width * r.height), `${name} at 1/${s}: mean difference`).toBeLessThan(meanLimit);
        expect(worst, `${name} at 1/${s}: largest difference`).toBeLessThan(24);
      }
    });
  }

  it("puts the quadrants in their places (red, green / blue, yellow)", () => {
    const colour = ([r, g, b]: Rgb): string =>
      r > g + 80 && r > b + 80
        ? "red"
        : g > r + 80 && g > b + 80
          ? "green"
          : b > r + 80 && b > g + 80
            ? "blue"
            : r > b + 80 && g > b + 80
              ? "yellow"
              : "?";
    for (const s of SCALES) {
      const r = decodeJpegScaled(FIXTURES["cjpeg 420-progressive"]!(), s);
      const pick = (x: number, y: number): string => colour(at(r, Math.floor(x / s), Math.floor(y / s)));
      expect([pick(12, 12), pick(52, 12), pick(12, 44), pick(52, 44)], `1/${s}`).toEqual(["red", "green", "blue", "yellow"]);
    }
  });

  it("at 1/1 equals a float reference decode within rounding (samples, then colours)", () => {
    for (const [name, make] of Object.entries(FIXTURES)) {
      const bytes = make();
      expect(maxDiff(decodeJpegScaled(bytes, 1), reference(bytes, name.startsWith("RGB"))), name).toBeLessThanOrEqual(2);
    }
  });

  it("gives the same pixels band by band (one MCU row at a time) as in one band", () => {
    for (const [name, make] of Object.entries(FIXTURES)) {
      const bytes = make();
      for (const s of SCALES)
        expect(decodeJpegScaledInBands(bytes, s, 1).pixels, `${name} at 1/${s}`).toEqual(decodeJpegScaled(bytes, s).pixels);
    }
  });

  it("keeps a band the scale drops when a later refinement of it is decoded", () => {
    // libjpeg's script codes luma 6-63 on its own, then refines 1-63: at 1/4 the 6-63 scan must be read.
    const baseline = fromBase64(TEXTURE.baseline);
    const progressive = fromBase64(TEXTURE.progressive);
    for (const s of SCALES) {
      const want = decodeJpegScaled(baseline, s);
      expect(decodeJpegScaled(progressive, s).pixels, `1/${s}`).toEqual(want.pixels);
      expect(decodeJpegScaledInBands(progressive, s, 1).pixels, `1/${s} in bands`).toEqual(want.pixels);
    }
  });

  it("skips the progressive scans whose frequencies a scale drops", () => {
    const intact = FIXTURES["cjpeg 420-progressive-split-bands"]!();
    // Luma band 5-63 (first scan and refinement) holds nothing the 2x2 (1/4) or DC (1/8) decode uses.
    const broken = corruptScans(intact, (ids, ss) => ids.length === 1 && ids[0] === 1 && ss === 5);
    expect(broken).not.toEqual(intact);
    for (const s of [4, 8] as const) expect(decodeJpegScaled(broken, s).pixels, `1/${s}`).toEqual(decodeJpegScaled(intact, s).pixels);
    for (const s of [1, 2] as const) expect(() => decodeJpegScaled(broken, s), `1/${s}`).toThrow(ImageStructureError);
    // Chroma bands 1-63 hold the 2x2 frequencies: 1/4 reads them, 1/8 does not.
    const chroma = corruptScans(intact, (ids, ss) => ids.length === 1 && ids[0] !== 1 && ss === 1);
    expect(decodeJpegScaled(chroma, 8).pixels).toEqual(decodeJpegScaled(intact, 8).pixels);
    expect(() => decodeJpegScaled(chroma, 4)).toThrow(ImageStructureError);
  });
});

describe("decodeJpegScaled refuses what it cannot decode", () => {
  const base = (): Uint8Array =>
    build([
      [2, 2],
      [1, 1],
      [1, 1],
    ]);

  it("arithmetic coding, 12-bit samples, 2 or 4 components", () => {
    const arithmetic = base();
    arithmetic[sofAt(arithmetic) + 1] = 0xc9;
    expect(() => decodeJpegScaled(arithmetic, 2)).toThrow(/arithmetic/);
    const twelve = base();
    twelve[sofAt(twelve) + 4] = 12;
    expect(() => decodeJpegScaled(twelve, 2)).toThrow(/12-bit/);
    expect(() =>
      decodeJpegScaled(
        build([
          [1, 1],
          [1, 1],
          [1, 1],
          [1, 1],
        ]),
        2,
      ),
    ).toThrow(/4-component/);
    expect(() =>
      decodeJpegScaled(
        build([
          [1, 1],
          [1, 1],
        ]),
        8,
      ),
    ).toThrow(/2-component/);
  });

  it("truncated or corrupt data, something else than a JPEG, a scale it does not offer", () => {
    const b = base();
    const cut = new Uint8Array(Math.floor(b.length * 0.6) + 2);
    cut.set(b.subarray(0, cut.length - 2));
    cut.set([0xff, 0xd9], cut.length - 2);
    for (const s of SCALES) expect(() => decodeJpegScaled(cut, s)).toThrow(ImageStructureError);
    expect(() => decodeJpegScaled(b.subarray(0, b.length - 40), 4)).toThrow(/truncated|EOI/);
    expect(() =>
      decodeJpegScaled(
        corruptScans(b, () => true),
        8,
      ),
    ).toThrow(ImageStructureError);
    expect(() => decodeJpegScaled(Uint8Array.of(0x89, 0x50, 0x4e, 0x47), 2)).toThrow(ImageStructureError);
    expect(() => decodeJpegScaled(b, 3 as JpegScale)).toThrow(RangeError);
  });
});

describe("jpegScaleFor", () => {
  it("picks the largest scale that still gives at least the target width", () => {
    expect(jpegScaleFor(6000, 320)).toBe(8);
    expect(jpegScaleFor(6000, 750)).toBe(8);
    expect(jpegScaleFor(6000, 751)).toBe(4);
    expect(jpegScaleFor(6000, 1600)).toBe(2);
    expect(jpegScaleFor(6000, 3000)).toBe(2);
    expect(jpegScaleFor(6000, 3001)).toBe(1);
    expect(jpegScaleFor(1001, 126)).toBe(8); // ceil(1001 / 8) = 126
    expect(jpegScaleFor(100, 200)).toBe(1);
  });
});
