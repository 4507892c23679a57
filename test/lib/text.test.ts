import { z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { multilineText, oneLine, singleLineText, textViolation } from "../../src/lib/text";

const C0 = Array.from({ length: 0x20 }, (_, code) => String.fromCharCode(code));
const LINE_BREAKS = ["\t", "\n", "\r"];

describe("textViolation", () => {
  it("refuses every C0 character in one-line text, all but tab, LF and CR in multi-line text", () => {
    for (const character of C0) {
      expect(textViolation(`a${character}b`), JSON.stringify(character)).toMatch(/control characters/);
      const multiline = textViolation(`a${character}b`, true);
      if (LINE_BREAKS.includes(character)) expect(multiline).toBeNull();
      else expect(multiline, JSON.stringify(character)).toMatch(/other than tab, line feed and carriage return/);
    }
  });

  it("passes DEL, C1 and any other character, and refuses unpaired surrogates only", () => {
    expect(textViolation("Kettle \u007f\u0085\u00a0é 😀 \u2028")).toBeNull();
    expect(textViolation("\ud83d")).toMatch(/unpaired surrogate/);
    expect(textViolation("x\ude00", true)).toMatch(/unpaired surrogate/);
    expect(textViolation("")).toBeNull();
  });
});

describe("the zod building blocks", () => {
  it("give one issue per refused value, before the length checks chained after them", () => {
    const name = singleLineText().trim().min(2).max(5);
    const issues = name.safeParse("\u0000").error?.issues ?? [];
    expect(issues.map((issue) => issue.message)).toEqual(["Must not contain control characters (U+0000 to U+001F)."]);
    expect(name.parse("  ab  ")).toBe("ab");
    expect(name.safeParse("abcdef").success).toBe(false);
    expect(multilineText().parse("a\r\n\tb")).toBe("a\r\n\tb");
    expect(multilineText().safeParse("a\u000bb").success).toBe(false);
    expect(oneLine(z.url()).safeParse("https://example.org/a\u0000").success).toBe(false);
    expect(oneLine(z.url()).parse("https://example.org/a")).toBe("https://example.org/a");
  });
});
