/** ISO-8601 UTC with seconds precision and `Z`, the API's timestamp format: `2026-05-01T12:00:00Z`. */
export function isoSeconds(date: Date | number): string {
  const ms = typeof date === "number" ? date : date.getTime();
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}
