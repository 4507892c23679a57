import { describe, expect, it } from "vitest";
import { csvCell } from "../../../src/lib/csv.ts";
import { type Column, isoDatetime, TableDataError } from "../../../src/lib/release/columns.ts";
import { CsvTableWriter } from "../../../src/lib/release/csv-table-writer.ts";
import { CollectingSink, parseCsv } from "./support.ts";

const COLUMNS: readonly Column[] = [
  { name: "id", type: "int64", nullable: false },
  { name: "name", type: "string" },
  { name: "weight_g", type: "double" },
  { name: "is_crm", type: "boolean" },
  { name: "props", type: "object" },
  { name: "domains", type: "array" },
  { name: "created_at", type: "datetime" },
];

const text = (sink: CollectingSink) => new TextDecoder().decode(sink.bytes());

describe("CsvTableWriter", () => {
  it("writes a header and RFC 4180 rows: CRLF, quoting, the formula guard, no BOM", async () => {
    const sink = new CollectingSink();
    const writer = CsvTableWriter.create(sink, COLUMNS);
    await writer.write([
      {
        id: 1,
        name: 'Lamp "Arc", large',
        weight_g: 1200.5,
        is_crm: true,
        props: { recyclability: "high" },
        domains: ["materials", "products"],
        created_at: 1_777_636_800,
      },
      {
        id: 2,
        name: '=HYPERLINK("x")',
        weight_g: null,
        is_crm: 0,
        props: null,
        domains: "[]",
        created_at: new Date(Date.UTC(2026, 4, 1, 12, 0, 0, 250)),
      },
      {
        id: 3,
        name: "Müller 咖啡 🧪\r\nsecond line",
        weight_g: -0.25,
        is_crm: undefined,
        props: '{"a":1}',
        domains: null,
        created_at: null,
      },
    ]);
    expect(await writer.finish()).toEqual({ rows: 3 });
    const bytes = sink.bytes();
    expect([...bytes.subarray(0, 3)]).not.toEqual([0xef, 0xbb, 0xbf]);
    expect(text(sink)).toBe(
      "id,name,weight_g,is_crm,props,domains,created_at\r\n" +
        '1,"Lamp ""Arc"", large",1200.5,true,"{""recyclability"":""high""}","[""materials"",""products""]",2026-05-01T12:00:00Z\r\n' +
        '2,"\'=HYPERLINK(""x"")",,false,,[],2026-05-01T12:00:00.250Z\r\n' +
        '3,"Müller 咖啡 🧪\r\nsecond line",-0.25,,"{""a"":1}",,\r\n',
    );
  });

  it("writes the header alone for a table without rows", async () => {
    const sink = new CollectingSink();
    expect(await CsvTableWriter.create(sink, COLUMNS).finish()).toEqual({ rows: 0 });
    expect(text(sink)).toBe("id,name,weight_g,is_crm,props,domains,created_at\r\n");
  });

  it("refuses a batch with a row that does not fit, and writes none of it", async () => {
    const sink = new CollectingSink();
    const writer = CsvTableWriter.create(sink, COLUMNS);
    await writer.write([{ id: 1, name: "a", weight_g: 1, is_crm: false, props: null, domains: null, created_at: null }]);
    const bad: Record<string, unknown>[] = [
      { id: 2, name: "b", weight_g: 1, is_crm: false, props: null, domains: null, created_at: null },
      { id: null, name: "c", weight_g: 1, is_crm: false, props: null, domains: null, created_at: null },
    ];
    await expect(writer.write(bad)).rejects.toThrow(new TableDataError("id", 2, "null in a non-null column"));
    const cases: [Record<string, unknown>, string][] = [
      [{ id: 1.5 }, 'column "id", row 1: expected a safe integer, got 1.5'],
      [{ id: 2 ** 53 }, "expected a safe integer"],
      [{ weight_g: Number.NaN }, "expected a finite number"],
      [{ weight_g: "12" }, "expected a finite number, got a string of 2 characters"],
      [{ is_crm: 2 }, "expected a boolean or 0/1"],
      [{ name: 42 }, "expected a string"],
      [{ props: [1] }, "expected JSON an object"],
      [{ props: "[1]" }, "expected JSON an object"],
      [{ domains: { a: 1 } }, "expected JSON an array"],
      [{ created_at: new Date(Number.NaN) }, "expected a Date or epoch seconds, got an invalid Date"],
      [{ created_at: "2026-05-01" }, "expected a Date or epoch seconds"],
    ];
    for (const [change, message] of cases) {
      const row = { id: 5, name: "x", weight_g: 1, is_crm: true, props: null, domains: null, created_at: null, ...change };
      await expect(writer.write([row])).rejects.toThrow(message);
    }
    const { created_at: _dropped, ...missing } = bad[0]!;
    await expect(writer.write([missing])).rejects.toThrow('column "created_at", row 1: missing from the row');
    expect(writer.rowsWritten).toBe(1);
    expect(parseCsv(text(sink))).toEqual([COLUMNS.map((c) => c.name), ["1", "a", "1", "false", "", "", ""]]);
  });

  it("checks the column list", () => {
    const sink = new CollectingSink();
    expect(() => CsvTableWriter.create(sink, [])).toThrow("at least one column");
    expect(() =>
      CsvTableWriter.create(sink, [
        { name: "a", type: "string" },
        { name: "a", type: "int32" },
      ]),
    ).toThrow("appears twice");
    expect(() => CsvTableWriter.create(sink, [{ name: "a b", type: "string" }])).toThrow("not a plain identifier");
  });

  it("continues a file from its state without a second header", async () => {
    const whole = new CollectingSink();
    const first = new CollectingSink();
    const rows = Array.from({ length: 6 }, (_, i) => ({
      id: i,
      name: `n${i}`,
      weight_g: i / 2,
      is_crm: i % 2,
      props: null,
      domains: null,
      created_at: i,
    }));
    const a = CsvTableWriter.create(first, COLUMNS);
    await a.write(rows.slice(0, 4));
    const state = JSON.parse(JSON.stringify(a.state()));
    const b = CsvTableWriter.resume(first, COLUMNS, state);
    await b.write(rows.slice(4));
    expect(await b.finish()).toEqual({ rows: 6 });
    const c = CsvTableWriter.create(whole, COLUMNS);
    await c.write(rows);
    await c.finish();
    expect(text(first)).toBe(text(whole));
    expect(() => CsvTableWriter.resume(first, COLUMNS, { headerWritten: false, rows: 3 })).toThrow("not a CSV writer state");
  });

  it("hands large batches to the sink in pieces", async () => {
    const sink = new CollectingSink();
    const writer = CsvTableWriter.create(sink, [{ name: "text", type: "string" }]);
    await writer.write(Array.from({ length: 2000 }, (_, i) => ({ text: `${i}`.padEnd(500, "z") })));
    expect(sink.writes).toBeGreaterThanOrEqual(4);
    expect(parseCsv(text(sink))).toHaveLength(2001);
  });
});

describe("CsvTableWriter's UTF-8", () => {
  it("gives the bytes TextEncoder gives of the export's cell text: numbers, non-ASCII, lone surrogates, rows longer than its buffer", async () => {
    const columns: readonly Column[] = [
      { name: "n", type: "int64" },
      { name: "x", type: "double" },
      { name: "s", type: "string" },
      { name: "b", type: "boolean" },
    ];
    const texts = [
      "plain",
      "Gerät – «ß» 𝄞 漢字 🙂",
      "ünïcode, with a comma",
      '=SUM(A1) "quoted"',
      "lone \ud800 high and \udfff low",
      "é".repeat(200_000),
      "x".repeat(300_000),
      "",
      "-1",
    ];
    const integers = [0, -0, 7, -42, 1_000_000, 2 ** 53 - 1, -(2 ** 53 - 1), 10 ** 15];
    const doubles = [0.1 + 0.2, -0, 1e21, 1.5e-7, -1200.5, 5e-324, 123456789.125];
    const rows = Array.from({ length: 64 }, (_, i) => ({
      n: i % 9 === 8 ? null : integers[i % integers.length]!,
      x: i % 8 === 7 ? null : doubles[i % doubles.length]!,
      s: i % 10 === 9 ? null : texts[i % texts.length]!,
      b: i % 3 === 2 ? null : i % 2 === 0,
    }));
    const sink = new CollectingSink();
    const writer = CsvTableWriter.create(sink, columns);
    await writer.write(rows);
    const lines = rows.map((row) => `${[row.n, row.x, row.s, row.b].map((value) => csvCell(value)).join(",")}\r\n`);
    const expected = `n,x,s,b\r\n${lines.join("")}`;
    expect(Buffer.from(sink.bytes()).equals(Buffer.from(new TextEncoder().encode(expected)))).toBe(true);
  });
});

describe("isoDatetime", () => {
  it("gives the text of Date#toISOString (without .000), for any time", () => {
    const reference = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");
    const cases = [
      0, 1, 999, 1000, 86_399_999, 86_400_000, 951_782_400_000, 951_868_799_999, 4_107_542_400_000, 253_402_300_799_999,
      253_402_300_800_000, -1, -86_400_001, -62_135_596_800_000, 8.64e15,
    ];
    let seed = 7;
    for (let i = 0; i < 20_000; i++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      cases.push(Math.floor((seed / 2 ** 31) * 253_402_300_800_000), Math.floor((seed / 2 ** 31) * 4_102_444_800) * 1000);
    }
    for (const ms of cases) expect(isoDatetime(ms), String(ms)).toBe(reference(ms));
    // The same time twice in a row (the cached answer), then another.
    expect(isoDatetime(1_777_636_800_000)).toBe("2026-05-01T12:00:00Z");
    expect(isoDatetime(1_777_636_800_000)).toBe("2026-05-01T12:00:00Z");
    expect(isoDatetime(1_777_636_800_250)).toBe("2026-05-01T12:00:00.250Z");
  });
});
