import { createHash } from "node:crypto";
import { type Request, Response } from "miniflare";
import { type DuckDbQuery, duckdbQuery } from "./duckdb-bridge.ts";
import { fakeDataCite } from "./fake-datacite.ts";
import { fakeOAuthProvider, googleAccessTokenInfo } from "./fake-oauth-provider.ts";
import {
  DATACITE_SWITCHES,
  FAKE_DATACITE,
  FAKE_EMAIL_API_KEY,
  FAKE_GITHUB,
  FAKE_GOOGLE,
  FAKE_SCANNER_TOKEN,
  FAKE_YOUTUBE_API,
  FAKE_YOUTUBE_INGEST,
  PWNED,
  YOUTUBE_SCOPES,
  YOUTUBE_TITLE_SWITCHES,
} from "./fake-upstream-config.ts";
import { fakeVideoPlatform } from "./fake-video-platform.ts";

const sha1 = (text: string) => createHash("sha1").update(text).digest("hex").toUpperCase();
const PWNED_HASHES = Object.fromEntries(Object.entries(PWNED).map(([kind, password]) => [kind, sha1(password)]));

/**
 * Pwned Passwords' range API: only `/range/<5 hex>` with `Add-Padding: true` is answered (so a
 * client that sent more of the hash, or forgot the padding, would not find the breached password).
 */
async function pwnedRange(request: Request, url: URL): Promise<Response> {
  const prefix = /^\/range\/([0-9A-F]{5})$/.exec(url.pathname)?.[1];
  if (!prefix || request.method !== "GET" || request.headers.get("add-padding") !== "true") {
    return new Response("bad range request", { status: 400 });
  }
  if (PWNED_HASHES.slow!.startsWith(prefix)) {
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    return new Response("", { status: 200 });
  }
  if (PWNED_HASHES.down!.startsWith(prefix)) return new Response("unavailable", { status: 503 });
  // Padding entries have count 0; a real answer holds several hundred suffixes.
  const lines = Array.from({ length: 20 }, (_, i) => `${sha1(`pad-${prefix}-${i}`).slice(5)}:0`);
  if (PWNED_HASHES.breached!.startsWith(prefix)) lines.push(`${PWNED_HASHES.breached!.slice(5)}:42`);
  return new Response(lines.join("\r\n"), { status: 200, headers: { "content-type": "text/plain" } });
}

/**
 * An external malware scanner: POST of the raw bytes with the bearer token; bytes containing
 * `EXTERNAL-SCANNER-POSITIVE` are infected, `EXTERNAL-SCANNER-SLOW` take 3 s, `EXTERNAL-SCANNER-BROKEN` get a 500.
 */
async function malwareScanner(request: Request): Promise<Response> {
  if (request.method !== "POST" || request.headers.get("authorization") !== `Bearer ${FAKE_SCANNER_TOKEN}`) {
    return Response.json({ error: "unauthorised" }, { status: 401 });
  }
  const text = Buffer.from(await request.arrayBuffer()).toString("latin1");
  if (text.includes("EXTERNAL-SCANNER-SLOW")) await new Promise((resolve) => setTimeout(resolve, 3_000));
  if (text.includes("EXTERNAL-SCANNER-BROKEN")) return new Response("scanner crashed", { status: 500 });
  const infected = text.includes("EXTERNAL-SCANNER-POSITIVE");
  return Response.json(infected ? { infected: true, signature: "Test.External.Positive" } : { infected: false });
}

/**
 * Stands in for the internet during tests (this machine has none): every outbound `fetch()` of
 * the Worker under test lands here, in the Node process. Each host behaves like one kind of
 * upstream; anything else is a 502, so a test never passes by reaching a real service.
 */
export async function fakeUpstream(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (url.host === "upstream.test") {
    switch (url.pathname) {
      case "/ok":
        return new Response("ok", { status: 200 });
      case "/redirect":
        return new Response(null, { status: 302, headers: { Location: "https://upstream.test/ok" } });
      case "/slow":
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        return new Response("late", { status: 200 });
    }
  }
  if (url.host === "api.pwnedpasswords.com") return pwnedRange(request, url);
  // Not an upstream: DuckDB for the tests that read release files with it (test/support/duckdb-bridge.ts).
  if (url.host === "duckdb.test" && url.pathname === "/query" && request.method === "POST") {
    const answer = await duckdbQuery((await request.json()) as DuckDbQuery);
    return new Response(answer.body, { status: answer.status, headers: { "content-type": "application/json" } });
  }
  // The Google and GitHub sign-in fakes answer plain objects; only this file deals in miniflare's Response.
  const oauth = await fakeOAuthProvider(request, { google: FAKE_GOOGLE, github: FAKE_GITHUB });
  if (oauth) return new Response(oauth.body, { status: oauth.status, headers: oauth.headers });
  // YouTube checks tokens against Google's own records, so the video fake gets the Google fake's lookup.
  const video = await fakeVideoPlatform(request, {
    apiUrl: FAKE_YOUTUBE_API,
    ingestAddress: FAKE_YOUTUBE_INGEST,
    scopes: YOUTUBE_SCOPES,
    switches: YOUTUBE_TITLE_SWITCHES,
    tokenInfo: googleAccessTokenInfo,
  });
  if (video) return new Response(video.body, { status: video.status, headers: video.headers });
  const datacite = await fakeDataCite(request, { datacite: FAKE_DATACITE, switches: DATACITE_SWITCHES });
  if (datacite) return new Response(datacite.body, { status: datacite.status, headers: datacite.headers });
  if (url.host === "scanner.upstream.test" && url.pathname === "/scan") return malwareScanner(request);
  if (url.host === "mail.upstream.test" && url.pathname === "/emails" && request.method === "POST") {
    if (request.headers.get("authorization") !== `Bearer ${FAKE_EMAIL_API_KEY}`) {
      return Response.json({ message: "invalid api key" }, { status: 401 });
    }
    const body = (await request.json()) as { from?: string; to?: string[]; subject?: string; text?: string };
    const valid = body.from && Array.isArray(body.to) && body.to.length === 1 && body.subject && body.text;
    if (!valid) return Response.json({ message: "invalid message" }, { status: 422 });
    return Response.json({ id: `fake-${body.to![0]}` }, { status: 200 });
  }
  return new Response(`no fake upstream for ${url.origin}`, { status: 502 });
}
