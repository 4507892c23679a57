// Prints the code an authenticator app would show for a TOTP secret (base32, or the whole
// otpauth:// URI), so the two-step steps of the README can be tried from a terminal.
//
//   node scripts/totp-code.mjs <secret>          the current code
//   node scripts/totp-code.mjs --next <secret>   waits for the next 30-s code, then prints it
//
// --next is for a second code in a row: the API takes each code once (replay guard), so a step
// right after another that used one needs the next code.
import { parseArgs } from "node:util";
import { Secret, TOTP, URI } from "otpauth";

const { values, positionals } = parseArgs({ options: { next: { type: "boolean" } }, allowPositionals: true });
const input = positionals[0];
if (!input) {
  console.error("usage: node scripts/totp-code.mjs [--next] <base32 secret | otpauth:// URI>");
  process.exit(2);
}
const totp = input.startsWith("otpauth://") ? URI.parse(input) : new TOTP({ secret: Secret.fromBase32(input) });
if (!(totp instanceof TOTP)) {
  console.error("not a TOTP URI");
  process.exit(2);
}
if (values.next) {
  const periodMs = totp.period * 1000;
  const wait = periodMs - (Date.now() % periodMs) + 200;
  console.error(`waiting ${Math.ceil(wait / 1000)} s for the next code`);
  await new Promise((resolve) => setTimeout(resolve, wait));
}
console.log(totp.generate());
