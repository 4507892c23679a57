import { describe, expect, it } from "vitest";
import {
  isAllowedCommand,
  isSafeHlsPath,
  MAX_TEXT_FRAME_BYTES,
  parseDeviceFrame,
  textFrameBytes,
} from "../../../src/plugins/rpi-cam/protocol";

// The private device contract of the rpi-cam plugin (decisions.md, Camera plugin): the allow-list
// of commands the backend may relay (with HLS paths that can never climb out of the preview
// directory, however they are encoded), the parsing of the device's frames, and the UTF-8 size of
// a text frame as the 64 KiB limit sees it.

describe("isAllowedCommand", () => {
  const allowed: Array<[string, string]> = [
    ["GET", "/camera"],
    ["GET", "/camera/controls"],
    ["PATCH", "/camera/controls"],
    ["PUT", "/camera/focus"],
    ["POST", "/captures"],
    ["POST", "/preview/start"],
    ["POST", "/preview/stop"],
    ["GET", "/preview/hls/index.m3u8"],
    ["GET", "/preview/hls/segment_00042.ts"],
    ["GET", "/preview/hls/low/segment-1.m4s"],
    ["GET", "/streams/youtube"],
    ["POST", "/streams/youtube"],
    ["DELETE", "/streams/youtube"],
    ["GET", "/system/local-access"],
    ["GET", "/system/telemetry"],
    ["DELETE", "/pairing"],
  ];

  it.each(allowed)("lets %s %s through", (method, path) => {
    expect(isAllowedCommand(method, path)).toBe(true);
  });

  const wrongMethods: Array<[string, string]> = [
    ["POST", "/camera"],
    ["DELETE", "/camera"],
    ["PUT", "/camera/controls"],
    ["DELETE", "/camera/controls"],
    ["GET", "/camera/focus"],
    ["PATCH", "/camera/focus"],
    ["GET", "/captures"],
    ["DELETE", "/captures"],
    ["GET", "/preview/start"],
    ["GET", "/preview/stop"],
    ["POST", "/preview/hls/index.m3u8"],
    ["DELETE", "/preview/hls/index.m3u8"],
    ["PUT", "/streams/youtube"],
    ["PATCH", "/streams/youtube"],
    ["POST", "/system/local-access"],
    ["DELETE", "/system/telemetry"],
    ["GET", "/pairing"],
    ["POST", "/pairing"],
  ];

  it.each(wrongMethods)("refuses %s %s (a listed path under another method)", (method, path) => {
    expect(isAllowedCommand(method, path)).toBe(false);
  });

  const unknownPaths = [
    "/",
    "",
    "/cameras",
    "/camera/reboot",
    "/system",
    "/system/shell",
    "/system/telemetry/extra",
    "/streams",
    "/streams/twitch",
    "/preview",
    "/preview/hls",
    "camera",
    "//camera",
    "/CAMERA",
    "/camera?debug=1",
    "/camera#fragment",
  ];

  it.each(unknownPaths)("refuses the unknown path %j", (path) => {
    expect(isAllowedCommand("GET", path)).toBe(false);
  });

  it("refuses a listed path with a trailing slash", () => {
    const withSlash: Array<[string, string]> = [
      ["GET", "/camera/"],
      ["GET", "/camera/controls/"],
      ["POST", "/captures/"],
      ["GET", "/system/telemetry/"],
      ["DELETE", "/pairing/"],
      ["GET", "/streams/youtube/"],
    ];
    for (const [method, path] of withSlash) expect(isAllowedCommand(method, path), path).toBe(false);
    expect(isAllowedCommand("GET", "/preview/hls/low/")).toBe(false);
  });

  it("refuses paths that climb from a listed one to another", () => {
    expect(isAllowedCommand("GET", "/camera/../system/telemetry")).toBe(false);
    expect(isAllowedCommand("GET", "/camera/./controls")).toBe(false);
    expect(isAllowedCommand("GET", "/system/local-access/../telemetry")).toBe(false);
  });

  const unsafeHls = [
    "/preview/hls/../../etc/passwd",
    "/preview/hls/..",
    "/preview/hls/low/../../secret",
    "/preview/hls/%2e%2e/x",
    "/preview/hls/%2E%2E/x",
    "/preview/hls/.%2e/x",
    "/preview/hls/a%2f..%2f..%2fx",
    "/preview/hls/%252e%252e/x",
    "/preview/hls/%25252e%25252e/x",
    "/preview/hls/..%5cetc%5cpasswd",
    "/preview/hls/a%5cb.ts",
    "/preview/hls/index.m3u8%00",
    "/preview/hls/index%00.ts",
    "/preview/hls/%2500.ts",
    "/preview/hls/seg%0a.ts",
    "/preview/hls/seg%7f.ts",
    "/preview/hls/",
    "/preview/hls//index.m3u8",
    "/preview/hls/./index.m3u8",
    "/preview/hls/%zz.ts",
  ];

  it.each(unsafeHls)("refuses the HLS path %j", (path) => {
    expect(isAllowedCommand("GET", path)).toBe(false);
  });

  it("refuses backslashes, raw or encoded, in an HLS path", () => {
    expect(isAllowedCommand("GET", "/preview/hls/..\\..\\etc\\passwd")).toBe(false);
    expect(isAllowedCommand("GET", "/preview/hls/low\\index.m3u8")).toBe(false);
    expect(isAllowedCommand("GET", "/preview/hls/low%5Cindex.m3u8")).toBe(false);
  });

  it("refuses raw control characters and spaces in an HLS path", () => {
    expect(isAllowedCommand("GET", "/preview/hls/index\u0000.ts")).toBe(false);
    expect(isAllowedCommand("GET", "/preview/hls/index\n.ts")).toBe(false);
    expect(isAllowedCommand("GET", "/preview/hls/my segment.ts")).toBe(false);
  });

  it("lets a harmless percent-encoded HLS name through", () => {
    expect(isAllowedCommand("GET", "/preview/hls/seg%2D1.ts")).toBe(true);
  });
});

describe("isSafeHlsPath", () => {
  it("accepts plain file names and sub-directories", () => {
    for (const path of ["index.m3u8", "segment_00001.ts", "low/index.m3u8", "a/b/c/d.ts", "..hidden", "seg..1.ts", "~tmp.ts"]) {
      expect(isSafeHlsPath(path), path).toBe(true);
    }
  });

  it("refuses empty, `.` and `..` segments", () => {
    for (const path of ["", ".", "..", "../x", "x/..", "x/../y", "./x", "x/./y", "x//y", "/x", "x/"]) {
      expect(isSafeHlsPath(path), path).toBe(false);
    }
  });

  it("refuses `..` however many times it is percent-encoded", () => {
    for (const path of ["%2e%2e", "%2e%2e/x", "%2E.", "%252e%252e/x", "%25252e%25252e/x", "%2525252e%2525252e/x", "x%2f%2e%2e%2fy"]) {
      expect(isSafeHlsPath(path), path).toBe(false);
    }
  });

  it("refuses backslashes, NUL and other control characters, raw or encoded", () => {
    for (const path of ["a\\b", "%5c", "a%5Cb", "a\u0000b", "%00", "%2500", "a%01b", "a%1fb", "a%7fb", "a\tb", "a%0d%0ab"]) {
      expect(isSafeHlsPath(path), JSON.stringify(path)).toBe(false);
    }
  });

  it("refuses malformed percent escapes", () => {
    for (const path of ["%", "%e", "%zz", "seg%2.ts", "%c3%28"]) {
      expect(isSafeHlsPath(path), path).toBe(false);
    }
  });

  it("decodes up to four layers of encoding and refuses a fifth", () => {
    // "a" encoded four times over decodes to a plain name; five times is more than any client sends.
    expect(isSafeHlsPath("%25252561")).toBe(true);
    expect(isSafeHlsPath("%2525252561")).toBe(false);
  });

  it("accepts at most 256 characters", () => {
    expect(isSafeHlsPath("a".repeat(256))).toBe(true);
    expect(isSafeHlsPath("a".repeat(257))).toBe(false);
  });
});

describe("parseDeviceFrame", () => {
  it("reads a complete response frame", () => {
    const frame = { type: "response", id: "req-1", status: 200, content_type: "application/json", has_binary: false, data: { ok: true } };
    expect(parseDeviceFrame(JSON.stringify(frame))).toEqual(frame);
  });

  it("reads a response announcing a binary frame", () => {
    const frame = { type: "response", id: "req-2", status: 206, content_type: "video/mp2t", has_binary: true, data: null };
    expect(parseDeviceFrame(JSON.stringify(frame))).toEqual(frame);
  });

  it("fills in null content type and data and a false has_binary when they are left out", () => {
    expect(parseDeviceFrame(JSON.stringify({ type: "response", id: "r", status: 404 }))).toEqual({
      type: "response",
      id: "r",
      status: 404,
      content_type: null,
      has_binary: false,
      data: null,
    });
  });

  it("accepts the edges of the status range", () => {
    expect(parseDeviceFrame(JSON.stringify({ type: "response", id: "a", status: 100 }))).toMatchObject({ status: 100 });
    expect(parseDeviceFrame(JSON.stringify({ type: "response", id: "a", status: 599 }))).toMatchObject({ status: 599 });
  });

  it("reads pings and pongs, dropping anything else they carry", () => {
    expect(parseDeviceFrame('{"type":"pong"}')).toEqual({ type: "pong" });
    expect(parseDeviceFrame('{"type":"ping"}')).toEqual({ type: "ping" });
    expect(parseDeviceFrame('{"type":"ping","id":"x","extra":[1,2,3]}')).toEqual({ type: "ping" });
  });

  it("gives null for text that is not JSON", () => {
    for (const text of ["", "not json", "{", '{"type":"pong"', "pong"]) {
      expect(parseDeviceFrame(text), text).toBeNull();
    }
  });

  it("gives null for JSON that is not an object of a known type", () => {
    for (const text of [
      "null",
      "42",
      '"pong"',
      "true",
      "[]",
      '["pong"]',
      "{}",
      '{"type":"request","id":"a","status":200}',
      '{"type":"PONG"}',
    ]) {
      expect(parseDeviceFrame(text), text).toBeNull();
    }
  });

  it("gives null for a response without a usable id", () => {
    const frame = (id: unknown) => JSON.stringify({ type: "response", id, status: 200 });
    expect(parseDeviceFrame(JSON.stringify({ type: "response", status: 200 }))).toBeNull();
    for (const id of ["", 42, null, ["a"], "x".repeat(65)]) {
      expect(parseDeviceFrame(frame(id)), JSON.stringify(id)).toBeNull();
    }
    expect(parseDeviceFrame(frame("x".repeat(64)))).toMatchObject({ id: "x".repeat(64) });
  });

  it("gives null for a status that is missing, out of range or not an integer", () => {
    expect(parseDeviceFrame(JSON.stringify({ type: "response", id: "a" }))).toBeNull();
    for (const status of [99, 600, 0, -200, 1000, 200.5, "200", null, true]) {
      expect(parseDeviceFrame(JSON.stringify({ type: "response", id: "a", status })), JSON.stringify(status)).toBeNull();
    }
  });

  it("gives null when has_binary is not a boolean", () => {
    for (const hasBinary of ["true", 1, 0, "false", null, {}]) {
      expect(
        parseDeviceFrame(JSON.stringify({ type: "response", id: "a", status: 200, has_binary: hasBinary })),
        JSON.stringify(hasBinary),
      ).toBeNull();
    }
  });

  it("gives null when content_type is neither a string nor null", () => {
    for (const contentType of [5, true, ["text/plain"], { type: "text/plain" }]) {
      expect(parseDeviceFrame(JSON.stringify({ type: "response", id: "a", status: 200, content_type: contentType }))).toBeNull();
    }
  });
});

describe("textFrameBytes", () => {
  const utf8 = (text: string) => new TextEncoder().encode(text).length;

  it("keeps short texts within the limit", () => {
    for (const text of ["", '{"type":"pong"}', "é".repeat(1000), "😀".repeat(1000)]) {
      expect(textFrameBytes(text)).toBeLessThanOrEqual(MAX_TEXT_FRAME_BYTES);
    }
  });

  it("counts ASCII exactly at the limit", () => {
    expect(textFrameBytes("a".repeat(MAX_TEXT_FRAME_BYTES))).toBe(MAX_TEXT_FRAME_BYTES);
    expect(textFrameBytes("a".repeat(MAX_TEXT_FRAME_BYTES + 1))).toBe(MAX_TEXT_FRAME_BYTES + 1);
  });

  it("counts two-byte characters as two bytes each (once) near the limit", () => {
    const atLimit = "é".repeat(MAX_TEXT_FRAME_BYTES / 2);
    expect(atLimit.length).toBe(32_768);
    expect(textFrameBytes(atLimit)).toBe(MAX_TEXT_FRAME_BYTES);
    expect(textFrameBytes(`${atLimit}é`)).toBe(MAX_TEXT_FRAME_BYTES + 2);
    expect(textFrameBytes(`${atLimit}a`)).toBe(MAX_TEXT_FRAME_BYTES + 1);
  });

  it("counts three-byte characters past the limit although there are fewer characters than bytes", () => {
    // 21,846 euro signs are 65,538 bytes: over the limit, though only a third as many characters.
    const text = "€".repeat(21_846);
    expect(textFrameBytes(text)).toBe(utf8(text));
    expect(textFrameBytes(text)).toBeGreaterThan(MAX_TEXT_FRAME_BYTES);
    expect(textFrameBytes("€".repeat(21_845))).toBeLessThanOrEqual(MAX_TEXT_FRAME_BYTES);
  });

  it("counts a surrogate pair as its four UTF-8 bytes", () => {
    const text = "😀".repeat(MAX_TEXT_FRAME_BYTES / 4);
    expect(textFrameBytes(text)).toBe(MAX_TEXT_FRAME_BYTES);
    expect(textFrameBytes(`${text}😀`)).toBe(MAX_TEXT_FRAME_BYTES + 4);
  });

  it("counts mixed text exactly once it could be over the limit", () => {
    const text = `${"a".repeat(40_000)}${"é".repeat(10_000)}${"€".repeat(2_000)}${"😀".repeat(10)}`;
    expect(textFrameBytes(text)).toBe(utf8(text));
    expect(textFrameBytes(text)).toBe(40_000 + 20_000 + 6_000 + 40);
  });
});
