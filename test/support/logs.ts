import { vi } from "vitest";

/**
 * Records what the Worker writes to the console from now on (the Worker under test runs in the
 * test's isolate). `lines` are the raw strings, `entries` the JSON log lines parsed.
 */
export function captureLogs() {
  const lines: string[] = [];
  const record = (...args: unknown[]) => {
    lines.push(args.map((arg) => (typeof arg === "string" ? arg : JSON.stringify(arg))).join(" "));
  };
  const spies = [
    vi.spyOn(console, "log").mockImplementation(record),
    vi.spyOn(console, "warn").mockImplementation(record),
    vi.spyOn(console, "error").mockImplementation(record),
  ];
  return {
    lines,
    entries: () =>
      lines.flatMap((line) => {
        try {
          return [JSON.parse(line) as Record<string, unknown>];
        } catch {
          return [];
        }
      }),
    restore: () => spies.forEach((spy) => spy.mockRestore()),
  };
}
