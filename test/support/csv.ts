/**
 * Reads RFC 4180 CSV (quoted cells with doubled quotes, CRLF records) into rows of cells, the
 * way a spreadsheet or `csv.reader` would; a test parses the export with it instead of trusting
 * the writer's own functions. A leading BOM is kept out of the first cell.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  let i = text.startsWith("\uFEFF") ? 1 : 0;
  for (; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') {
      if (cell !== "") throw new Error(`quote inside an unquoted cell at ${i}`);
      quoted = true;
    } else if (ch === ",") {
      row.push(cell);
      cell = "";
    } else if (ch === "\r" && text[i + 1] === "\n") {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
      i++;
    } else if (ch === "\n" || ch === "\r") {
      throw new Error(`bare line break outside quotes at ${i}`);
    } else cell += ch;
  }
  if (quoted) throw new Error("unterminated quoted cell");
  if (cell !== "" || row.length > 0) throw new Error("last record not ended by CRLF");
  return rows;
}

/** Rows as objects keyed by the header row. */
export function csvRecords(text: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text);
  return rows.map((row) => {
    if (row.length !== header!.length) throw new Error(`row has ${row.length} cells, header ${header!.length}`);
    return Object.fromEntries(header!.map((name, i) => [name, row[i]!]));
  });
}
