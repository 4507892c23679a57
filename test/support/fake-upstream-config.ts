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

/**
 * Fake Google identity provider (test/support/fake-oauth-provider.ts). Its `.test` host can never
 * resolve, so a misrouted request fails instead of reaching Google.
 */
export const FAKE_GOOGLE = {
  clientId: "google-test-client",
  clientSecret: "google-test-secret",
  authorizeUrl: "https://google.oauth.test/o/oauth2/v2/auth",
  tokenUrl: "https://google.oauth.test/token",
  userinfoUrl: "https://google.oauth.test/v1/userinfo",
  revokeUrl: "https://google.oauth.test/revoke",
} as const;

/** Fake GitHub OAuth app; the revoke path carries the client id, as GitHub's does. */
export const FAKE_GITHUB = {
  clientId: "github-test-client",
  clientSecret: "github-test-secret",
  authorizeUrl: "https://github.oauth.test/login/oauth/authorize",
  tokenUrl: "https://github.oauth.test/login/oauth/access_token",
  userUrl: "https://github.oauth.test/user",
  emailsUrl: "https://github.oauth.test/user/emails",
  revokeUrl: "https://github.oauth.test/applications/github-test-client/grant",
} as const;

/** Variables that point the Worker's Google and GitHub sign-in at the fakes. */
export const OAUTH_TEST_VARS = {
  OAUTH_GOOGLE_CLIENT_ID: FAKE_GOOGLE.clientId,
  OAUTH_GOOGLE_CLIENT_SECRET: FAKE_GOOGLE.clientSecret,
  OAUTH_GOOGLE_AUTHORIZE_URL: FAKE_GOOGLE.authorizeUrl,
  OAUTH_GOOGLE_TOKEN_URL: FAKE_GOOGLE.tokenUrl,
  OAUTH_GOOGLE_USERINFO_URL: FAKE_GOOGLE.userinfoUrl,
  OAUTH_GOOGLE_REVOKE_URL: FAKE_GOOGLE.revokeUrl,
  OAUTH_GITHUB_CLIENT_ID: FAKE_GITHUB.clientId,
  OAUTH_GITHUB_CLIENT_SECRET: FAKE_GITHUB.clientSecret,
  OAUTH_GITHUB_AUTHORIZE_URL: FAKE_GITHUB.authorizeUrl,
  OAUTH_GITHUB_TOKEN_URL: FAKE_GITHUB.tokenUrl,
  OAUTH_GITHUB_USER_URL: FAKE_GITHUB.userUrl,
  OAUTH_GITHUB_EMAILS_URL: FAKE_GITHUB.emailsUrl,
  OAUTH_GITHUB_REVOKE_URL: FAKE_GITHUB.revokeUrl,
  NATIVE_APP_SCHEME: "relab",
  OAUTH_TOKEN_FLOW_ENABLED: "true",
};

/**
 * The identity a fake provider signs in as. There is no login page: the test picks the user by
 * passing `encodeProfile(profile)` as the authorize step's hint (Google `login_hint`, GitHub
 * `login`), so each test can make up its own user without shared fixtures.
 */
export type FakeProfile = {
  sub: string;
  email: string | null;
  email_verified: boolean;
  name?: string;
  /** GitHub username; "octo" when absent. */
  login?: string;
  /** The user refuses consent: authorize redirects back with `error=access_denied`. */
  deny?: boolean;
  /** That endpoint answers 503 for this user's codes or tokens (a provider outage). */
  down?: "token" | "userinfo";
};

/** base64url of the profile's JSON; Web APIs only, so both workerd and Node can run it. */
export function encodeProfile(profile: FakeProfile): string {
  const bytes = new TextEncoder().encode(JSON.stringify(profile));
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * Fake YouTube Live Streaming API (test/support/fake-video-platform.ts), on a `.test` host like the
 * identity fakes. Calls need a Google access token from FAKE_GOOGLE granted one of YOUTUBE_SCOPES.
 */
export const FAKE_YOUTUBE_API = "https://youtube.video.test/youtube/v3/";

/** The RTMP ingestion address every fake stream reports; the stream key is random per stream. */
export const FAKE_YOUTUBE_INGEST = "rtmp://a.rtmp.youtube.test/live2";

/** Scopes the real API accepts for live broadcasts and streams; any other token gets a 403. */
export const YOUTUBE_SCOPES = ["https://www.googleapis.com/auth/youtube", "https://www.googleapis.com/auth/youtube.force-ssl"] as const;

/** Markers in a broadcast's title that make its insert misbehave, so each test picks its own failure. */
export const YOUTUBE_TITLE_SWITCHES = {
  /** 403 liveStreamingNotEnabled: the channel may not stream. */
  refuse: "[refuse]",
  /** The insert answers after 3 s (and still creates the broadcast). */
  slow: "[slow]",
  /** 503 backendError; nothing is created. */
  down: "[down]",
} as const;

/** Variables that point the Worker's live streaming at the fake. */
export const VIDEO_TEST_VARS = { YOUTUBE_API_URL: FAKE_YOUTUBE_API };

/**
 * Fake DataCite REST API (test/support/fake-datacite.ts): the repository the tests register
 * release DOIs in. Its `.test` host never resolves, so nothing reaches DataCite.
 */
export const FAKE_DATACITE = {
  apiUrl: "https://api.datacite.test",
  prefix: "10.80001",
  repositoryId: "RELAB.TEST",
  password: "datacite-test-password",
} as const;

/** Markers in a release's title that make DataCite misbehave for it (or set per DOI: `PUT /__fake/dois/{doi}`). */
export const DATACITE_SWITCHES = {
  /** 503 to every call. */
  down: "[datacite-down]",
  /** Each call answers after 3 s (longer than the tests' DATACITE_TIMEOUT_MS). */
  slow: "[datacite-slow]",
  /** 500 to registrations and updates. */
  error: "[datacite-500]",
  /** 422: the metadata refused. */
  refuse: "[datacite-refuse]",
} as const;

/** Variables that switch DOI registration on against the fake (the `datacite` test project). */
export const DATACITE_TEST_VARS = {
  DATACITE_API_URL: FAKE_DATACITE.apiUrl,
  DATACITE_PREFIX: FAKE_DATACITE.prefix,
  DATACITE_REPOSITORY_ID: FAKE_DATACITE.repositoryId,
  DATACITE_PASSWORD: FAKE_DATACITE.password,
  DATACITE_TIMEOUT_MS: "1000",
  RELEASE_PUBLISHER: "relab test publisher",
  RELEASE_CREATOR: "Reverse Engineering Lab (tests)",
  RELEASE_CREATOR_ROR: "https://ror.org/05xg72x27",
};
