// Shared by the fake upstream (Node side) and the tests (workerd side); imports nothing, so the
// Worker runtime never loads the fake's Node dependencies.

/** API key the fake email provider accepts. */
export const FAKE_EMAIL_API_KEY = "test-email-provider-key";

/** Passwords the fake Pwned Passwords range service treats specially (each passes every local rule). */
export const PWNED = {
  /** Listed as breached (count 42). */
  breached: "tangerine-osprey-1987-breach",
  /** Its range request hangs longer than the service waits. */
  slow: "marzipan-lighthouse-slow-77",
  /** Its range request gets a 503. */
  down: "quokka-harbour-outage-2024",
} as const;

/** Bearer token the fake malware scanner accepts. */
export const FAKE_SCANNER_TOKEN = "test-scanner-token";

/** Variables that switch the external malware scanner on, pointing at the fake. */
export const EXTERNAL_SCANNER_VARS = {
  MALWARE_SCANNER_URL: "https://scanner.upstream.test/scan",
  MALWARE_SCANNER_TOKEN: FAKE_SCANNER_TOKEN,
  MALWARE_SCANNER_TIMEOUT_MS: "1000",
};
