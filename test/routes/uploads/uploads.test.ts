import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { contractViolations } from "../../support/contract";
import { api, expectProblem } from "../../support/http";

// /uploads serves the media objects of R2 (decisions.md, Media): public, content-addressed and
// immutable, single byte ranges, never HTML, never anything outside the served prefixes.

const hex = (seed: string, length: number) => {
  let out = "";
  for (let i = 0; out.length < length; i++) out += ((seed.charCodeAt(i % seed.length) * 31 + i * 7) % 256).toString(16).padStart(2, "0");
  return out.slice(0, length);
};

const IMAGE_KEY = `${hex("image", 64)}.jpg`;
const PNG_KEY = `${hex("png", 64)}.png`;
const FILE_KEY = `${hex("file", 64)}.csv`;
const MISSING_KEY = `${hex("missing", 64)}.jpg`;
const QUARANTINED_ID = hex("quarantined", 32);

const IMAGE = Uint8Array.from({ length: 40 }, (_, i) => (i * 13 + 1) % 256);
const THUMB_200 = Uint8Array.from({ length: 24 }, (_, i) => (i * 7 + 200) % 256);
const THUMB_800 = Uint8Array.from({ length: 30 }, (_, i) => (i * 5 + 80) % 256);
const FILE = new TextEncoder().encode("id,name\n1,grinder\n2,kettle\n");
const SECRET = new TextEncoder().encode("QUARANTINED-BYTES-NEVER-SERVED");

beforeAll(async () => {
  const put = (key: string, bytes: Uint8Array, contentType: string) => env.UPLOADS.put(key, bytes, { httpMetadata: { contentType } });
  await Promise.all([
    put(`images/${IMAGE_KEY}`, IMAGE, "image/jpeg"),
    put(`images/${PNG_KEY}`, IMAGE, "image/png"),
    put(`images/thumbnails/200/${IMAGE_KEY}`, THUMB_200, "image/jpeg"),
    put(`images/thumbnails/800/${IMAGE_KEY}`, THUMB_800, "image/jpeg"),
    put(`files/${FILE_KEY}`, FILE, "text/csv; charset=utf-8"),
    // Objects at keys no URL may name: each would be served if the key checks were missing.
    put(`quarantine/images/${QUARANTINED_ID}`, SECRET, "text/html"),
    put(`quarantine/files/${QUARANTINED_ID}`, SECRET, "text/html"),
    put("images/abc.jpg", SECRET, "image/jpeg"),
    put(`images/${IMAGE_KEY.toUpperCase().replace(".JPG", ".jpg")}`, SECRET, "image/jpeg"),
    put(`images/${hex("image", 64)}`, SECRET, "image/jpeg"),
    put(`images/thumbnails/400/${IMAGE_KEY}`, SECRET, "image/jpeg"),
    put(`images/thumbnails/0200/${IMAGE_KEY}`, SECRET, "image/jpeg"),
    put(`images/thumbnails/200.0/${IMAGE_KEY}`, SECRET, "image/jpeg"),
    put(`files/${hex("file", 64)}.csvxyz`, SECRET, "text/csv"),
  ]);
});

const bytesOf = async (response: Response) => new Uint8Array(await response.arrayBuffer());

/** Headers every successful /uploads answer carries. */
function expectServedHeaders(response: Response, contentType: string) {
  expect(response.headers.get("content-type")).toBe(contentType);
  expect(response.headers.get("x-content-type-options")).toBe("nosniff");
  expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
  expect(response.headers.get("etag")).toMatch(/^"[^"]+"$/);
  expect(response.headers.get("accept-ranges")).toBe("bytes");
  expect(response.headers.get("cross-origin-resource-policy")).toBe("cross-origin");
  const csp = response.headers.get("content-security-policy") ?? "";
  expect(csp).toMatch(/(^|;)\s*sandbox(\s|;|$)/);
  expect(csp).toMatch(/default-src 'none'/);
}

/** A 404 Problem Details answer whose body is not any stored object's bytes. */
async function expectMissing(response: Response) {
  const body = await expectProblem(response, 404, "NOT_FOUND");
  expect(JSON.stringify(body)).not.toContain("QUARANTINED");
}

describe("GET /uploads/images/{key}", () => {
  it("serves the stored bytes with their type, immutable caching and the security headers", async () => {
    const response = await api(`/uploads/images/${IMAGE_KEY}`);
    expect(response.status).toBe(200);
    expectServedHeaders(response, "image/jpeg");
    expect(response.headers.get("content-length")).toBe(String(IMAGE.length));
    expect(response.headers.get("content-disposition")).toBeNull();
    expect(await bytesOf(response)).toEqual(IMAGE);

    const png = await api(`/uploads/images/${PNG_KEY}`);
    expect(png.status).toBe(200);
    expectServedHeaders(png, "image/png");
    expect(await bytesOf(png)).toEqual(IMAGE);
  });

  it("sends the object's own ETag, the same on every read, and 304 for If-None-Match", async () => {
    const first = await api(`/uploads/images/${IMAGE_KEY}`);
    await first.arrayBuffer();
    const etag = first.headers.get("etag")!;
    const object = await env.UPLOADS.head(`images/${IMAGE_KEY}`);
    expect(etag).toBe(object!.httpEtag);

    const again = await api(`/uploads/images/${IMAGE_KEY}`);
    expect(again.headers.get("etag")).toBe(etag);
    await again.arrayBuffer();

    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`]) {
      const notModified = await api(`/uploads/images/${IMAGE_KEY}`, { headers: { "if-none-match": ifNoneMatch } });
      expect(notModified.status, ifNoneMatch).toBe(304);
      expect(notModified.headers.get("etag")).toBe(etag);
      expect(notModified.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(await notModified.text()).toBe("");
    }

    const changed = await api(`/uploads/images/${IMAGE_KEY}`, { headers: { "if-none-match": '"something-else"' } });
    expect(changed.status).toBe(200);
    expect(await bytesOf(changed)).toEqual(IMAGE);
  });

  it("answers 304 to If-None-Match: * (the object exists), RFC 9110 13.1.2", async () => {
    const response = await api(`/uploads/images/${IMAGE_KEY}`, { headers: { "if-none-match": "*" } });
    expect(response.status).toBe(304);
    expect(await response.text()).toBe("");
    await expectMissing(await api(`/uploads/images/${MISSING_KEY}`, { headers: { "if-none-match": "*" } }));
  });

  it("evaluates If-None-Match before Range (RFC 9110 13.2.2): 304 even for a range it could not satisfy", async () => {
    const etag = (await env.UPLOADS.head(`images/${IMAGE_KEY}`))!.httpEtag;
    const inRange = await api(`/uploads/images/${IMAGE_KEY}`, { headers: { "if-none-match": etag, range: "bytes=2-5" } });
    expect(inRange.status).toBe(304);
    expect(inRange.headers.get("content-range")).toBeNull();
    const outOfRange = await api(`/uploads/images/${IMAGE_KEY}`, { headers: { "if-none-match": etag, range: "bytes=1000-" } });
    expect(outOfRange.status).toBe(304);
  });

  it("answers a byte range with 206, Content-Range and exactly those bytes", async () => {
    const response = await api(`/uploads/images/${IMAGE_KEY}`, { headers: { range: "bytes=2-5" } });
    expect(response.status).toBe(206);
    expectServedHeaders(response, "image/jpeg");
    expect(response.headers.get("content-range")).toBe(`bytes 2-5/${IMAGE.length}`);
    expect(response.headers.get("content-length")).toBe("4");
    expect(await bytesOf(response)).toEqual(IMAGE.slice(2, 6));
  });

  it("answers a suffix range and an open range, clipped to the end", async () => {
    const suffix = await api(`/uploads/images/${IMAGE_KEY}`, { headers: { range: "bytes=-4" } });
    expect(suffix.status).toBe(206);
    expect(suffix.headers.get("content-range")).toBe(`bytes ${IMAGE.length - 4}-${IMAGE.length - 1}/${IMAGE.length}`);
    expect(suffix.headers.get("content-length")).toBe("4");
    expect(await bytesOf(suffix)).toEqual(IMAGE.slice(-4));

    const open = await api(`/uploads/images/${IMAGE_KEY}`, { headers: { range: "bytes=30-" } });
    expect(open.status).toBe(206);
    expect(open.headers.get("content-range")).toBe(`bytes 30-${IMAGE.length - 1}/${IMAGE.length}`);
    expect(await bytesOf(open)).toEqual(IMAGE.slice(30));

    const clipped = await api(`/uploads/images/${IMAGE_KEY}`, { headers: { range: "bytes=35-1000" } });
    expect(clipped.status).toBe(206);
    expect(clipped.headers.get("content-range")).toBe(`bytes 35-${IMAGE.length - 1}/${IMAGE.length}`);
    expect(clipped.headers.get("content-length")).toBe(String(IMAGE.length - 35));
    expect(await bytesOf(clipped)).toEqual(IMAGE.slice(35));
  });

  it("answers an unsatisfiable range with 416 Problem Details and Content-Range: bytes */size", async () => {
    for (const range of [`bytes=${IMAGE.length}-`, "bytes=1000-2000", "bytes=-0"]) {
      const response = await api(`/uploads/images/${IMAGE_KEY}`, { headers: { range } });
      expect(response.headers.get("content-range"), range).toBe(`bytes */${IMAGE.length}`);
      const problem = await expectProblem(response, 416, "RANGE_NOT_SATISFIABLE");
      // The title is the status's reason phrase (RFC 9110, 15.5.17), as for every other status.
      expect(problem.title).toBe("Range Not Satisfiable");
    }
  });

  it("ignores ranges it does not serve (several ranges, other units, malformed) and sends the whole object", async () => {
    for (const range of ["bytes=0-1,4-5", "items=0-3", "bytes=5-2", "bytes=x-y"]) {
      const response = await api(`/uploads/images/${IMAGE_KEY}`, { headers: { range } });
      expect(response.status, range).toBe(200);
      expect(response.headers.get("content-range"), range).toBeNull();
      expect(response.headers.get("content-length"), range).toBe(String(IMAGE.length));
      expect(await bytesOf(response)).toEqual(IMAGE);
    }
  });

  it("answers HEAD with the headers of GET and no body", async () => {
    const response = await api(`/uploads/images/${IMAGE_KEY}`, { method: "HEAD" });
    expect(response.status).toBe(200);
    expectServedHeaders(response, "image/jpeg");
    expect(response.headers.get("content-length")).toBe(String(IMAGE.length));
    expect((await bytesOf(response)).length).toBe(0);
  });

  it("answers a missing image with 404 Problem Details, with or without a Range, never HTML", async () => {
    await expectMissing(await api(`/uploads/images/${MISSING_KEY}`));
    await expectMissing(await api(`/uploads/images/${MISSING_KEY}`, { headers: { range: "bytes=0-3" } }));
    await expectMissing(await api(`/uploads/images/${MISSING_KEY}`, { headers: { accept: "text/html" } }));
    const head = await api(`/uploads/images/${MISSING_KEY}`, { method: "HEAD" });
    expect(head.status).toBe(404);
  });

  it("answers malformed keys with 404 without reading other objects", async () => {
    const malformed = [
      "abc.jpg",
      IMAGE_KEY.toUpperCase().replace(".JPG", ".jpg"),
      hex("image", 64), // no extension
      `${hex("image", 63)}.jpg`,
      `${hex("image", 64)}0.jpg`,
      `${hex("image", 64)}.jpeg1`, // extension longer than 5
      `${hex("image", 64)}.JPG`,
      `${hex("image", 64)}.jpg.html`,
      `${hex("image", 64)}..jpg`,
      "%2e%2e%2fx",
      `%2e%2e%2f${IMAGE_KEY}`,
      `x%2f${IMAGE_KEY}`,
      `${IMAGE_KEY}%00`,
      `${IMAGE_KEY}%20`,
    ];
    for (const key of malformed) {
      const response = await api(`/uploads/images/${key}`);
      expect(response.status, key).toBe(404);
      await expectMissing(response);
    }
  });
});

describe("GET /uploads/images/thumbnails/{width}/{key}", () => {
  it("serves the thumbnail of each width with the same headers", async () => {
    const small = await api(`/uploads/images/thumbnails/200/${IMAGE_KEY}`);
    expect(small.status).toBe(200);
    expectServedHeaders(small, "image/jpeg");
    expect(small.headers.get("content-length")).toBe(String(THUMB_200.length));
    expect(await bytesOf(small)).toEqual(THUMB_200);

    const medium = await api(`/uploads/images/thumbnails/800/${IMAGE_KEY}`);
    expect(medium.status).toBe(200);
    expect(await bytesOf(medium)).toEqual(THUMB_800);

    // Not made (yet) at 1600: 404, not the image itself.
    await expectMissing(await api(`/uploads/images/thumbnails/1600/${IMAGE_KEY}`));
  });

  it("honours ranges and If-None-Match like the image", async () => {
    const range = await api(`/uploads/images/thumbnails/200/${IMAGE_KEY}`, { headers: { range: "bytes=2-5" } });
    expect(range.status).toBe(206);
    expect(range.headers.get("content-range")).toBe(`bytes 2-5/${THUMB_200.length}`);
    expect(await bytesOf(range)).toEqual(THUMB_200.slice(2, 6));
    const etag = range.headers.get("etag")!;
    const notModified = await api(`/uploads/images/thumbnails/200/${IMAGE_KEY}`, { headers: { "if-none-match": etag } });
    expect(notModified.status).toBe(304);
    const unsatisfiable = await api(`/uploads/images/thumbnails/200/${IMAGE_KEY}`, { headers: { range: "bytes=500-" } });
    expect(unsatisfiable.headers.get("content-range")).toBe(`bytes */${THUMB_200.length}`);
    await expectProblem(unsatisfiable, 416, "RANGE_NOT_SATISFIABLE");
  });

  it("serves only the widths 200, 800 and 1600, even where an object exists at another", async () => {
    for (const width of ["400", "0200", "200.0", "100", "0", "-200", "abc", "1600px"]) {
      await expectMissing(await api(`/uploads/images/thumbnails/${width}/${IMAGE_KEY}`));
    }
  });

  it("answers a malformed key or a missing thumbnail with 404", async () => {
    await expectMissing(await api(`/uploads/images/thumbnails/200/${MISSING_KEY}`));
    await expectMissing(await api("/uploads/images/thumbnails/200/abc.jpg"));
    await expectMissing(await api(`/uploads/images/thumbnails/200/${IMAGE_KEY.toUpperCase()}`));
  });
});

describe("GET /uploads/files/{key}", () => {
  it("serves the file as an attachment with its type and the served headers", async () => {
    const response = await api(`/uploads/files/${FILE_KEY}`);
    expect(response.status).toBe(200);
    expectServedHeaders(response, "text/csv; charset=utf-8");
    expect(response.headers.get("content-disposition")).toMatch(/^attachment\b/);
    expect(response.headers.get("content-length")).toBe(String(FILE.length));
    expect(await bytesOf(response)).toEqual(FILE);
  });

  it("is sent under a media type the OpenAPI document lists for it, whole and in part (found by the fuzz test)", async () => {
    // api() leaves attachments' bodies unread, and with them their media type: checked here.
    const path = `/uploads/files/${FILE_KEY}`;
    const whole = await api(path);
    expect(contractViolations("GET", path, whole.status, whole.headers.get("content-type"), null)).toEqual([]);
    const part = await api(path, { headers: { range: "bytes=2-5" } });
    expect(contractViolations("GET", path, part.status, part.headers.get("content-type"), null)).toEqual([]);
  });

  it("answers ranges (206, suffix, 416), If-None-Match and HEAD", async () => {
    const range = await api(`/uploads/files/${FILE_KEY}`, { headers: { range: "bytes=2-5" } });
    expect(range.status).toBe(206);
    expect(range.headers.get("content-disposition")).toMatch(/^attachment\b/);
    expect(range.headers.get("content-range")).toBe(`bytes 2-5/${FILE.length}`);
    expect(await bytesOf(range)).toEqual(FILE.slice(2, 6));

    const suffix = await api(`/uploads/files/${FILE_KEY}`, { headers: { range: "bytes=-7" } });
    expect(suffix.status).toBe(206);
    expect(suffix.headers.get("content-range")).toBe(`bytes ${FILE.length - 7}-${FILE.length - 1}/${FILE.length}`);
    expect(new TextDecoder().decode(await bytesOf(suffix))).toBe("kettle\n");

    const unsatisfiable = await api(`/uploads/files/${FILE_KEY}`, { headers: { range: `bytes=${FILE.length}-` } });
    expect(unsatisfiable.headers.get("content-range")).toBe(`bytes */${FILE.length}`);
    await expectProblem(unsatisfiable, 416, "RANGE_NOT_SATISFIABLE");

    const notModified = await api(`/uploads/files/${FILE_KEY}`, { headers: { "if-none-match": range.headers.get("etag")! } });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get("content-disposition")).toMatch(/^attachment\b/);

    const head = await api(`/uploads/files/${FILE_KEY}`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(FILE.length));
    expect(head.headers.get("content-disposition")).toMatch(/^attachment\b/);
    expect((await bytesOf(head)).length).toBe(0);
  });

  it("answers missing and malformed keys with 404, and never serves an image key from /files", async () => {
    await expectMissing(await api(`/uploads/files/${hex("nofile", 64)}.csv`));
    // The image exists under images/, not files/.
    await expectMissing(await api(`/uploads/files/${IMAGE_KEY}`));
    // An extension of six characters is not a content key, even with an object under it.
    await expectMissing(await api(`/uploads/files/${hex("file", 64)}.csvxyz`));
    await expectMissing(await api("/uploads/files/abc.csv"));
  });
});

describe("nothing outside the served prefixes is reachable", () => {
  it("never serves a quarantined object, however the path is encoded", async () => {
    const id = QUARANTINED_ID;
    const paths = [
      `/uploads/quarantine/images/${id}`,
      `/uploads/quarantine/files/${id}`,
      `/uploads/images/..%2fquarantine%2fimages%2f${id}`,
      `/uploads/images/%2e%2e%2fquarantine%2fimages%2f${id}`,
      `/uploads/images/%2E%2E%2Fquarantine%2Fimages%2F${id}`,
      `/uploads/images/%252e%252e%252fquarantine%252fimages%252f${id}`,
      `/uploads/images/thumbnails/200/%2e%2e%2f%2e%2e%2f%2e%2e%2fquarantine%2fimages%2f${id}`,
      `/uploads/images/thumbnails/..%2f..%2f..%2fquarantine%2fimages/${id}`,
      `/uploads/files/%2e%2e%2fquarantine%2ffiles%2f${id}`,
      `/uploads/files/..%5cquarantine%5cfiles%5c${id}`,
      `/uploads/images/../quarantine/images/${id}`,
      `/uploads/images/%2e%2e/quarantine/images/${id}`,
      `/uploads/images/.%2e/quarantine/images/${id}`,
      `/uploads/files/%2e%2e/%2e%2e/quarantine/files/${id}`,
      `/uploads/images/${id}`,
      `/uploads/files/${id}`,
      `/quarantine/images/${id}`,
    ];
    for (const path of paths) {
      for (const method of ["GET", "HEAD"]) {
        const response = await api(path, { method });
        const body = await bytesOf(response);
        expect(response.status, `${method} ${path}`).toBe(404);
        expect(new TextDecoder().decode(body), `${method} ${path}`).not.toContain("QUARANTINED");
        expect(response.headers.get("content-type"), `${method} ${path}`).toBe("application/problem+json");
      }
    }
    // The object is there: had any path reached it, the test above would have seen its bytes.
    expect(await (await env.UPLOADS.get(`quarantine/images/${id}`))!.text()).toBe("QUARANTINED-BYTES-NEVER-SERVED");
  });

  it("answers unknown paths under /uploads with 404 Problem Details, not HTML", async () => {
    for (const path of [
      "/uploads",
      "/uploads/",
      "/uploads/images",
      "/uploads/images/",
      "/uploads/other/x",
      "/uploads/images/thumbnails/200",
      `/uploads/images/thumbnails/200/${IMAGE_KEY}/extra`,
      `/uploads/images/${IMAGE_KEY}/extra`,
      `/uploads/files/a/${FILE_KEY}`,
    ]) {
      const response = await api(path, { headers: { accept: "text/html" } });
      const body = await expectProblem(response, 404, "NOT_FOUND");
      expect(body.status, path).toBe(404);
    }
  });

  it("serves only reads: writes to an upload URL are refused with Problem Details", async () => {
    const response = await api(`/uploads/images/${IMAGE_KEY}`, { method: "PUT", body: "x" });
    expect(response.status).toBe(405);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(response.headers.get("allow")).toContain("GET");
    // Still the original bytes.
    expect(await bytesOf(await api(`/uploads/images/${IMAGE_KEY}`))).toEqual(IMAGE);
  });
});
