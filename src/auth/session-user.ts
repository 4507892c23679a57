/** The account behind a request, as the permission checks and `/users/me` need it (mapped from a `users` row by `toSessionUser`, src/services/sign-in/sessions.ts). */
export interface SessionUser {
  id: number;
  email: string;
  username: string;
  hashedPassword: string | null;
  isActive: boolean;
  isVerified: boolean;
  isSuperuser: boolean;
  role: "contributor" | "lab";
  profileVisibility: "public" | "community" | "private";
  lastLoginAt: number | null;
  uploadFileCount: number;
  uploadTotalBytes: number;
  /** Revocation epoch (ms); a login starts a session only if it is unchanged since the check. */
  tokensValidAfter: number;
  /** TOTP enrolled: logins need a second step, step-ups an authenticator or recovery code. */
  totpEnabled: boolean;
  /** The recovery codes' generation as the request found it: a regeneration compares and sets it. */
  recoveryCodesGeneration: string | null;
  /** The contributor terms accepted (their version) and when (Unix seconds); null when not accepted. */
  termsAcceptedVersion: number | null;
  termsAcceptedAt: number | null;
  createdAt: number;
  updatedAt: number;
  /**
   * Unix seconds of the sign-in that started the session the request came with (set only for a
   * user resolved from an access token; null when the session predates its recording).
   */
  sessionStartedAt?: number | null;
}
