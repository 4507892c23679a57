import { exports } from "cloudflare:workers";
import type { appFor } from "../../src/app";
import { ACCESS_COOKIE, REFRESH_COOKIE } from "../../src/auth/cookies";
import { contractViolations, documentedOperation } from "../support/contract";
import { ORIGIN } from "../support/http";
import { bmpImage, gifWithMetadata, simpleWebp } from "../support/image-fixtures-gif-webp-bmp";
import { buildPng } from "../support/image-fixtures-raster";
import type { Body, FileFixture, FuzzRequest } from "./requests";
import { encodePiece } from "./requests";
import { jsonText, Raw, Ref } from "./values";
import { type Principal, smallJpeg, type World } from "./world";

// Sending a generated request through the Worker's real fetch handler, and what every answer must
// be: never a 5xx (but for a camera that is offline, which the world keeps so on purpose), every
// 4xx a Problem Details body, and every answer as the OpenAPI document describes it (documented
// status and media type, the body valid against the schema).

/** The app whose document the answers are checked against. */
type App = ReturnType<typeof appFor>;

/** The fixtures an upload's file part is made from. */
export type FileBases = Record<FileFixture["base"], Uint8Array>;

export async function fileBases(): Promise<FileBases> {
  const text = (value: string) => new TextEncoder().encode(value);
  return {
    jpeg: smallJpeg(),
    png: await buildPng({ width: 4, height: 4, colorType: 2, depth: 8, sample: (x, y) => [x * 60, y * 60, 100] }),
    gif: gifWithMetadata(),
    webp: simpleWebp(),
    bmp: bmpImage(),
    csv: text("part,mass_g\r\nscrew,1.2\r\n"),
    pdf: text("%PDF-1.7\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n"),
    empty: new Uint8Array(0),
    random: new Uint8Array(64),
  };
}

/** A 5xx that is the world's doing, not the request's: commands to the camera the world never connects. */
const ENVIRONMENT_CODES = new Set(["CAMERA_OFFLINE"]);

const ANSWER_TIMEOUT_MS = 20_000;

export interface Sent {
  /** The request as it was sent, printable (credentials named, not shown). */
  shown: string;
  status: number;
  violations: string[];
}

function fileBytes(fixture: FileFixture, bases: FileBases): Uint8Array {
  let bytes = bases[fixture.base].slice();
  if (fixture.base === "random") {
    let state = fixture.seed ?? 1;
    bytes = bytes.map(() => (state = (state * 1_103_515_245 + 12_345) >>> 0) >>> 24);
  }
  for (const [offset, mask] of fixture.flips) if (bytes.length > 0) bytes[offset % bytes.length]! ^= mask;
  if (fixture.truncateTo !== undefined) bytes = bytes.slice(0, fixture.truncateTo);
  if (fixture.append?.length) bytes = new Uint8Array([...bytes, ...fixture.append]);
  return bytes;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

interface Rendered {
  body: Uint8Array | string | null;
  contentType: string | null;
  shownBody: string;
}

function renderBody(body: Body | undefined, resolve: (ref: Ref) => unknown, bases: FileBases): Rendered {
  if (!body) return { body: null, contentType: null, shownBody: "" };
  switch (body.kind) {
    case "json": {
      const text = jsonText(body.value, resolve);
      return { body: text, contentType: body.contentType, shownBody: text };
    }
    case "text":
      return { body: body.text, contentType: body.contentType, shownBody: body.text };
    case "bytes":
      return { body: new Uint8Array(body.bytes), contentType: body.contentType, shownBody: `bytes [${body.bytes.join(",")}]` };
    case "form": {
      const text = body.fields
        .map(
          ([name, value]) =>
            `${encodePiece(name)}=${value instanceof Raw ? value.text : encodePiece(String(value instanceof Ref ? resolve(value) : value))}`,
        )
        .join("&");
      return { body: text, contentType: "application/x-www-form-urlencoded", shownBody: text };
    }
    case "multipart": {
      const encoder = new TextEncoder();
      const chunks: Uint8Array[] = [];
      const shown: string[] = [];
      for (const part of body.parts) {
        if (typeof part.value === "string") {
          chunks.push(encoder.encode(`--${body.boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`));
          shown.push(`${part.name}=${JSON.stringify(part.value)}`);
        } else {
          const bytes = fileBytes(part.value.fixture, bases);
          const filename = part.value.filename.replace(/"/g, "%22");
          chunks.push(
            encoder.encode(
              `--${body.boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${filename}"\r\nContent-Type: ${part.value.type}\r\n\r\n`,
            ),
            bytes,
            encoder.encode("\r\n"),
          );
          shown.push(
            `${part.name}=<${bytes.length} bytes of ${JSON.stringify(part.value.fixture)} as ${JSON.stringify(part.value.filename)}, ${part.value.type}>`,
          );
        }
      }
      if (body.broken !== "no-end") chunks.push(encoder.encode(`--${body.boundary}--\r\n`));
      const contentType =
        body.broken === "no-type-boundary"
          ? "multipart/form-data"
          : `multipart/form-data; boundary=${body.broken === "wrong-boundary" ? "other" : body.boundary}`;
      return { body: concat(chunks), contentType, shownBody: `multipart (${body.broken ?? "well-formed"}): ${shown.join("; ")}` };
    }
  }
}

/** Sends `request` as `principal` and checks the answer; the violations found, if any. */
export async function send(
  request: FuzzRequest,
  world: World,
  principal: Principal | undefined,
  bases: FileBases,
  served: App,
): Promise<Sent> {
  // Path parameters: a Ref picks one of the world's assignments for the template.
  const assignments = Object.keys(request.params).length > 0 ? world.assignments(request.template, request.method.toLowerCase()) : [];
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.params)) {
    params[name] = value instanceof Ref ? encodePiece(assignments[value.index % assignments.length]![name]!) : value;
  }
  if (request.headers["if-match"] instanceof Ref) await world.refreshVersion(params.id);
  const resolve = (ref: Ref) => world.resolve(ref, principal, params);
  const path = request.template.replace(/\{([^}]+)\}/g, (_, name: string) => params[name] ?? "");
  const query = request.query
    .map(([name, value]) => {
      const text = value instanceof Raw ? value.text : encodePiece(String(value instanceof Ref ? resolve(value) : value));
      return `${encodePiece(name)}=${text}`;
    })
    .join("&");
  const url = `${path}${query ? `?${query}` : ""}`;

  const headers = new Headers();
  const shownHeaders: string[] = [];
  const set = (name: string, value: string, shown = value) => {
    try {
      headers.set(name, value);
      shownHeaders.push(`${name}: ${shown.length > 200 ? `${shown.slice(0, 200)}… (${shown.length} chars)` : shown}`);
    } catch {
      shownHeaders.push(`${name}: (not a valid header value, left out)`);
    }
  };
  for (const [name, value] of Object.entries(request.headers)) {
    set(name, value instanceof Ref ? String(resolve(value)) : value);
  }
  const who = `<${request.as}>`;
  switch (request.credential) {
    case "bearer":
      if (principal) set("authorization", `Bearer ${principal.accessToken}`, `Bearer ${who} access token`);
      break;
    case "cookie":
    case "cookie-cross-site":
      if (principal) {
        set("cookie", `${ACCESS_COOKIE}=${principal.accessToken}; ${REFRESH_COOKIE}=${principal.refreshToken}`, `${who} session cookies`);
        if (request.credential === "cookie-cross-site") set("origin", "https://evil.example");
      }
      break;
    case "garbage-bearer":
      set("authorization", "Bearer not.a.token");
      break;
    case "tampered-bearer":
      if (principal) {
        const token = principal.accessToken;
        set(
          "authorization",
          `Bearer ${token.slice(0, -2)}${token.endsWith("AA") ? "BB" : "AA"}`,
          `Bearer ${who} access token, last two characters changed`,
        );
      }
      break;
    case "basic":
      set("authorization", "Basic ZnV6ejpmdXp6");
      break;
  }
  const rendered = renderBody(request.body, resolve, bases);
  if (rendered.contentType !== null) set("content-type", rendered.contentType);
  const shownBody =
    rendered.shownBody.length > 2_000 ? `${rendered.shownBody.slice(0, 2_000)}… (${rendered.shownBody.length} chars)` : rendered.shownBody;
  const shown = [
    `${request.method} ${url.length > 2_000 ? `${url.slice(0, 2_000)}…` : url}`,
    ...shownHeaders,
    ...(shownBody ? ["", shownBody] : []),
  ].join("\n");

  let target: URL;
  let fetchRequest: Request;
  try {
    target = new URL(url, ORIGIN);
    fetchRequest = new Request(target, { method: request.method, headers, body: rendered.body });
  } catch (error) {
    // A request no client could send (the URL does not parse): nothing to check.
    return { shown, status: 0, violations: [] };
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolveTimeout) => (timer = setTimeout(() => resolveTimeout("timeout"), ANSWER_TIMEOUT_MS)));
  const answered = await Promise.race([exports.default.fetch(fetchRequest), timeout]);
  if (timer !== undefined) clearTimeout(timer);
  if (answered === "timeout") return { shown, status: 0, violations: [`no answer within ${ANSWER_TIMEOUT_MS / 1000} s`] };
  return {
    shown,
    status: answered.status,
    violations: await checkAnswer(request.method, target, answered, world.hiddenFrom(request.as, principal), served),
  };
}

/** What is wrong with `response` by the fuzz test's invariants; `hidden`: texts the sender must not see. */
async function checkAnswer(method: string, url: URL, response: Response, hidden: string[], served: App): Promise<string[]> {
  const violations: string[] = [];
  const type = response.headers.get("content-type");
  const essence = type?.split(";")[0]!.trim().toLowerCase() ?? null;
  const isJson = essence === "application/json" || (essence?.endsWith("+json") ?? false);
  // Every body is read to its end (streamed exports included) and searched as text for what the
  // sender may not see; only JSON is parsed.
  const bytes = response.body === null ? null : new Uint8Array(await response.arrayBuffer());
  const text = bytes === null ? null : new TextDecoder().decode(bytes);
  let body: unknown;
  if (isJson && text !== null) {
    try {
      body = JSON.parse(text);
    } catch {
      violations.push(`${essence} body is not JSON: ${text.slice(0, 200)}`);
    }
  } else if (bytes !== null && essence !== null) {
    body = null;
  }
  for (const secret of hidden)
    if (text?.includes(secret)) violations.push(`the answer holds another user's private ${JSON.stringify(secret)}: ${text.slice(0, 300)}`);
  const problem = body as
    | { type?: unknown; title?: unknown; status?: unknown; code?: unknown; detail?: unknown; request_id?: unknown }
    | undefined;
  if (response.status >= 500) {
    const code = typeof problem?.code === "string" ? problem.code : "(no code)";
    if (!ENVIRONMENT_CODES.has(code)) violations.push(`answered ${response.status} ${code}: ${String(problem?.detail ?? "")}`);
  }
  if (response.status >= 400) {
    if (essence !== "application/problem+json")
      violations.push(`a ${response.status} with Content-Type ${type}, not application/problem+json`);
    else if (
      problem?.status !== response.status ||
      typeof problem.code !== "string" ||
      problem.request_id !== response.headers.get("x-request-id")
    ) {
      violations.push(`a ${response.status} whose Problem Details do not agree with it: ${text?.slice(0, 300)}`);
    }
  }
  if (documentedOperation(method, url.pathname, served))
    violations.push(...contractViolations(method, url.pathname, response.status, type, body, served));
  return violations;
}
