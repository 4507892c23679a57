/** Upload limits per role tier (decisions.md, Media); the media routes enforce them, `/users/me` reports them. */
export const ROLE_LIMITS = {
  contributor: {
    uploadQuotaFiles: 1_000,
    uploadQuotaBytes: 3 * 1024 ** 3,
    imageUploadMaxBytes: 10 * 1024 ** 2,
    imageUploadMaxPixels: 12_582_912,
  },
  lab: {
    uploadQuotaFiles: 20_000,
    uploadQuotaBytes: 50 * 1024 ** 3,
    imageUploadMaxBytes: 20 * 1024 ** 2,
    imageUploadMaxPixels: 24_000_000,
  },
} as const;

/** Largest research file, for every role (decisions.md, Media); also the largest body an upload route reads. */
export const MAX_RESEARCH_FILE_BYTES = 50 * 1024 ** 2;
