// Serves the tests' fake Google and GitHub sign-in and fake YouTube Live API over plain http on
// this machine, so OAuth sign-in, linking YouTube and camera live streams can be tried with
// `npm start` and no internet. The fakes themselves are the TypeScript files the tests use
// (test/support/fake-oauth-provider.ts, fake-video-platform.ts): one implementation, no drift.
//
//   node scripts/fake-providers.mjs [--port 8790] [--email ada@example.org] [--sub local-1]
//
// Prints the variables that point the API at it. The service accepts these http URLs in
// development only (ENVIRONMENT=development: loopback joins the outbound allow-list).
// Everything lives in memory: restart it and every token the API holds is unknown.
import { createServer } from "node:http";
import path from "node:path";
import { build } from "esbuild";
import { readOptions } from "./cli-options.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");
const SUPPORT = path.join(ROOT, "test/support");

const USAGE = `Usage: node scripts/fake-providers.mjs [options]

Fake Google and GitHub OAuth providers and a fake YouTube Live API on http://127.0.0.1:<port>:
  /google/...  -> the fake Google (authorize, token, userinfo, revoke)
  /github/...  -> the fake GitHub (authorize, token, user, user/emails, revoke)
  /youtube/... -> the fake YouTube Data API v3 (/youtube/youtube/v3/...; GET /youtube/__state shows
                  its broadcasts and streams, without stream keys)

The authorize pages sign in as --email at once (there is no login page). To pick another user per
request, add login_hint (Google) or login (GitHub) = base64url of {"sub","email","email_verified"}.

Options:
  --port <n>      port (default 8790)
  --email <addr>  the signed-in user's address (default ada@example.org)
  --sub <id>      that user's provider account id (default local-1)
  -h, --help      this text`;

const options = readOptions(USAGE, {
  port: { type: "string", default: "8790" },
  email: { type: "string", default: "ada@example.org" },
  sub: { type: "string", default: "local-1" },
});
const port = Number(options.port);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  console.error(`--port must be a port number\n\n${USAGE}`);
  process.exit(2);
}

// The fakes are TypeScript with extension-less type imports; esbuild bundles them (and the
// config constants they are handed in the tests) into one module that imports nothing, so it
// can be loaded from a data: URL and leaves no build output behind.
const entry = [
  `export { fakeOAuthProvider, googleAccessTokenInfo } from ${JSON.stringify(path.join(SUPPORT, "fake-oauth-provider.ts"))};`,
  `export { fakeVideoPlatform } from ${JSON.stringify(path.join(SUPPORT, "fake-video-platform.ts"))};`,
  `export * from ${JSON.stringify(path.join(SUPPORT, "fake-upstream-config.ts"))};`,
].join("\n");
const bundle = await build({
  stdin: { contents: entry, resolveDir: ROOT, loader: "ts" },
  bundle: true,
  format: "esm",
  platform: "node",
  write: false,
  logLevel: "error",
});
const fakes = await import(`data:text/javascript;base64,${Buffer.from(bundle.outputFiles[0].contents).toString("base64")}`);
const { FAKE_GOOGLE, FAKE_GITHUB, FAKE_YOUTUBE_API, encodeProfile } = fakes;

// The same arguments fake-upstream.ts passes, so the fakes behave here exactly as in the tests.
const oauthEndpoints = { google: FAKE_GOOGLE, github: FAKE_GITHUB };
const videoConfig = {
  apiUrl: FAKE_YOUTUBE_API,
  ingestAddress: fakes.FAKE_YOUTUBE_INGEST,
  scopes: fakes.YOUTUBE_SCOPES,
  switches: fakes.YOUTUBE_TITLE_SWITCHES,
  tokenInfo: fakes.googleAccessTokenInfo,
};

// Path prefix here -> the fake's own (never resolvable) origin, and its authorize step's hint.
const ROUTES = {
  google: { origin: new URL(FAKE_GOOGLE.authorizeUrl).origin, authorize: new URL(FAKE_GOOGLE.authorizeUrl).pathname, hint: "login_hint" },
  github: { origin: new URL(FAKE_GITHUB.authorizeUrl).origin, authorize: new URL(FAKE_GITHUB.authorizeUrl).pathname, hint: "login" },
  youtube: { origin: new URL(FAKE_YOUTUBE_API).origin },
};
// In the tests every authorize request names its user; a person following the link cannot, so
// one is filled in (named after the address; GitHub also shows it as `login`).
const handle = options.email.split("@")[0];
const defaultHint = encodeProfile({ sub: options.sub, email: options.email, email_verified: true, name: handle, login: handle });

const local = (prefix, fakeUrl) => `http://127.0.0.1:${port}/${prefix}${new URL(fakeUrl).pathname}`;

/** The fake's answer to one request, or null when no prefix matches. */
async function dispatch(method, rawUrl, headers, body) {
  const incoming = new URL(rawUrl, `http://127.0.0.1:${port}`);
  const match = /^\/(google|github|youtube)(\/.*)$/.exec(incoming.pathname);
  if (!match) return null;
  const route = ROUTES[match[1]];
  const target = new URL(`${route.origin}${match[2]}${incoming.search}`);
  if (route.hint && target.pathname === route.authorize && !target.searchParams.has(route.hint)) {
    target.searchParams.set(route.hint, defaultHint);
  }
  // The fakes read only this much of a request (their OAuthRequest type).
  const request = { method, url: target.href, headers, text: async () => body.toString("utf8") };
  if (match[1] === "youtube") return fakes.fakeVideoPlatform(request, videoConfig);
  return fakes.fakeOAuthProvider(request, oauthEndpoints);
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", async () => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
    let reply;
    try {
      reply = (await dispatch(req.method, req.url, headers, Buffer.concat(chunks))) ?? {
        status: 404,
        headers: { "content-type": "text/plain" },
        body: "Not a fake: paths start with /google/, /github/ or /youtube/.\n",
      };
    } catch (error) {
      reply = { status: 500, headers: { "content-type": "text/plain" }, body: `fake failed: ${error.message}\n` };
    }
    // Path only: queries and bodies carry codes, tokens and stream keys, which stay off the terminal.
    console.error(`${new Date().toISOString().slice(11, 19)} ${req.method} ${req.url.split("?")[0]} -> ${reply.status}`);
    res.writeHead(reply.status, reply.headers);
    res.end(reply.body ?? undefined);
  });
});

server.on("error", (error) => {
  console.error(error.code === "EADDRINUSE" ? `Port ${port} is in use; pick another with --port.` : error.message);
  process.exit(1);
});
// Loopback only: the fakes hand out tokens to anyone who asks.
server.listen(port, "127.0.0.1", () => {
  const vars = {
    OAUTH_GOOGLE_CLIENT_ID: FAKE_GOOGLE.clientId,
    OAUTH_GOOGLE_CLIENT_SECRET: FAKE_GOOGLE.clientSecret,
    OAUTH_GOOGLE_AUTHORIZE_URL: local("google", FAKE_GOOGLE.authorizeUrl),
    OAUTH_GOOGLE_TOKEN_URL: local("google", FAKE_GOOGLE.tokenUrl),
    OAUTH_GOOGLE_USERINFO_URL: local("google", FAKE_GOOGLE.userinfoUrl),
    OAUTH_GOOGLE_REVOKE_URL: local("google", FAKE_GOOGLE.revokeUrl),
    OAUTH_GITHUB_CLIENT_ID: FAKE_GITHUB.clientId,
    OAUTH_GITHUB_CLIENT_SECRET: FAKE_GITHUB.clientSecret,
    OAUTH_GITHUB_AUTHORIZE_URL: local("github", FAKE_GITHUB.authorizeUrl),
    OAUTH_GITHUB_TOKEN_URL: local("github", FAKE_GITHUB.tokenUrl),
    OAUTH_GITHUB_USER_URL: local("github", FAKE_GITHUB.userUrl),
    OAUTH_GITHUB_EMAILS_URL: local("github", FAKE_GITHUB.emailsUrl),
    OAUTH_GITHUB_REVOKE_URL: local("github", FAKE_GITHUB.revokeUrl),
    YOUTUBE_API_URL: local("youtube", FAKE_YOUTUBE_API),
  };
  // The variables alone on stdout (`> fake.env` makes an env file); the rest goes to stderr.
  console.error(`Fake providers on http://127.0.0.1:${port}, signing in as ${options.email}. Ctrl-C stops them.`);
  console.error("Put these in .dev.vars (ENVIRONMENT=development), then restart the API:");
  for (const [name, value] of Object.entries(vars)) console.log(`${name}=${value}`);
});
process.on("SIGINT", () => process.exit(0));
process.on("SIGTERM", () => process.exit(0));
