/** Incoming ids are echoed only when short and made of URL-safe visible characters, so they can be logged verbatim. */
const WELL_FORMED = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** Returns the client's `X-Request-ID` when it is well formed, otherwise a new random UUID. */
export function resolveRequestId(incoming: string | undefined | null): string {
  return incoming && WELL_FORMED.test(incoming) ? incoming : crypto.randomUUID();
}
