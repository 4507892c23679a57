import type { MalwareScanConfig } from "../../config";
import type { Services } from "../../container";
import { SignatureScanner } from "../../lib/signature-scan";

/** What a scan found: nothing, or the name of what it found. */
export type ScanVerdict = { infected: false } | { infected: true; signature: string; scanner: "built-in" | "external" };

/** An external scanner that answered, but not with a verdict: the scan is retried, never passed. */
export class ScannerError extends Error {
  override name = "ScannerError";
}

/** Runs the built-in signature search over a stream of the bytes, one chunk in memory at a time. */
export async function builtInScan(body: ReadableStream<Uint8Array>, config: MalwareScanConfig): Promise<ScanVerdict> {
  const scanner = new SignatureScanner(config.signatures);
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (scanner.push(value)) {
      await reader.cancel();
      break;
    }
  }
  const found = scanner.result;
  return found ? { infected: true, signature: found, scanner: "built-in" } : { infected: false };
}

/**
 * Sends the bytes to the configured external scanner (POST, `application/octet-stream`, optional
 * bearer token) through the outbound allow-list, with its time-out. Anything but a 200 with
 * `{"infected": boolean}` throws, so the upload stays unpublished and the scan is retried.
 */
export async function externalScan(
  svc: Pick<Services, "outbound">,
  body: ReadableStream<Uint8Array>,
  size: number,
  external: NonNullable<MalwareScanConfig["external"]>,
): Promise<ScanVerdict> {
  const headers: Record<string, string> = { "Content-Type": "application/octet-stream", "Content-Length": String(size) };
  if (external.token) headers.Authorization = `Bearer ${external.token}`;
  const response = await svc.outbound(external.url, { method: "POST", headers, body }, { timeoutMs: external.timeoutMs });
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new ScannerError(`external scanner answered ${response.status}`);
  }
  let verdict: { infected?: unknown; signature?: unknown };
  try {
    verdict = (await response.json()) as typeof verdict;
  } catch {
    throw new ScannerError("external scanner answered without JSON");
  }
  if (typeof verdict?.infected !== "boolean") throw new ScannerError("external scanner answered without an `infected` verdict");
  if (!verdict.infected) return { infected: false };
  const signature = typeof verdict.signature === "string" && verdict.signature ? verdict.signature.slice(0, 200) : "unnamed";
  return { infected: true, signature, scanner: "external" };
}
