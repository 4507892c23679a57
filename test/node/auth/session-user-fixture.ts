import type { SessionUser } from "../../../src/auth/session-user";

/** A verified contributor (id 7) as the session code builds one: the base of the permission cases. */
export const VERIFIED_CONTRIBUTOR: SessionUser = {
  id: 7,
  email: "ada@example.org",
  username: "ada",
  hashedPassword: null,
  isActive: true,
  isVerified: true,
  isSuperuser: false,
  role: "contributor",
  profileVisibility: "public",
  lastLoginAt: null,
  uploadFileCount: 0,
  uploadTotalBytes: 0,
  tokensValidAfter: 0,
  totpEnabled: false,
  recoveryCodesGeneration: null,
  termsAcceptedVersion: null,
  termsAcceptedAt: null,
  orcid: null,
  releaseCredit: false,
  createdAt: 1_750_000_000,
  updatedAt: 1_750_000_000,
};
