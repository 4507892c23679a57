import { describe, expect, it } from "vitest";
import { BUILT_IN_SIGNATURES, parseSignatures, SignatureScanner } from "../../../src/lib/signature-scan";

const EICAR = "X5O!P%@AP[4\\PZX54(P^)7CC)7}$" + "EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*";
const bytes = (text: string) => new TextEncoder().encode(text);

function scan(chunks: Uint8Array[], signatures = BUILT_IN_SIGNATURES): string | null {
  const scanner = new SignatureScanner(signatures);
  for (const chunk of chunks) scanner.push(chunk);
  return scanner.result;
}

describe("signature scanner", () => {
  it("finds the EICAR test file alone, embedded, and split across chunks at every point", () => {
    expect(scan([bytes(EICAR)])).toBe("EICAR-Test-File");
    expect(scan([bytes(`%PDF-1.7\n${EICAR}\n%%EOF`)])).toBe("EICAR-Test-File");
    const whole = bytes(`padding ${EICAR} trailer`);
    for (let cut = 1; cut < whole.length; cut++) expect(scan([whole.slice(0, cut), whole.slice(cut)])).toBe("EICAR-Test-File");
    // One byte at a time.
    expect(scan([...whole].map((b) => Uint8Array.of(b)))).toBe("EICAR-Test-File");
  });

  it("passes clean data and a near miss", () => {
    expect(scan([bytes("just a csv,file\r\n1,2\r\n")])).toBeNull();
    expect(scan([bytes(EICAR.slice(0, -1))])).toBeNull();
  });

  it("reads configured signatures and finds them", () => {
    const signatures = parseSignatures("Test.Dropper:deadbeefcafebabe0001, other:00112233445566778899");
    expect(signatures.map((s) => s.name)).toEqual(["Test.Dropper", "other"]);
    expect(scan([Uint8Array.of(1, 2, 0xde, 0xad, 0xbe), Uint8Array.of(0xef, 0xca, 0xfe, 0xba, 0xbe, 0x00, 0x01, 9)], signatures)).toBe(
      "Test.Dropper",
    );
    expect(parseSignatures("")).toEqual([]);
    expect(parseSignatures(undefined)).toEqual([]);
  });

  it("refuses malformed or too short signatures", () => {
    for (const bad of ["nohex", "x:abc", "x:abcd", "bad name:00112233445566778899", "x:zz112233445566778899"]) {
      expect(() => parseSignatures(bad)).toThrow(/MALWARE_SIGNATURES/);
    }
  });
});
