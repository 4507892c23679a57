import { fromBase64, toBase64NoPad } from "../encoding";

/**
 * JSON for the Parquet writer's footer metadata, which holds bigints (offsets, counts) and byte
 * arrays (statistics): those become `{"$bigint": "…"}` and `{"$bytes": "<base64>"}`. Anything
 * else JSON cannot carry (a Date, another typed array, a Map) is refused rather than lost.
 */
export function toTaggedJson(value: unknown): string {
  return JSON.stringify(value, function (this: unknown, key: string, raw: unknown) {
    // `raw` has already been through toJSON (a Date is a string by then): look at the holder's.
    const original = (this as Record<string, unknown>)[key];
    if (typeof original === "bigint") return { $bigint: original.toString() };
    if (original instanceof Uint8Array) return { $bytes: toBase64NoPad(original) };
    if (ArrayBuffer.isView(original) || original instanceof Date || original instanceof Map || original instanceof Set) {
      throw new Error(`cannot carry ${Object.prototype.toString.call(original)} at "${key}" in tagged JSON`);
    }
    if (typeof original === "function" || typeof original === "symbol") {
      throw new Error(`cannot carry a ${typeof original} at "${key}" in tagged JSON`);
    }
    return raw;
  });
}

export function fromTaggedJson(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown) => {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
    const keys = Object.keys(value);
    if (keys.length !== 1) return value;
    const tagged = value as { $bigint?: unknown; $bytes?: unknown };
    if (typeof tagged.$bigint === "string") return BigInt(tagged.$bigint);
    if (typeof tagged.$bytes === "string") return fromBase64(tagged.$bytes);
    return value;
  });
}
