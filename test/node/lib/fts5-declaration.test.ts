import { describe, expect, it } from "vitest";
import { DeclarationError, fts5Declaration, virtualTableDeclaration } from "../../../src/lib/backup/fts5-declaration";

const optionsOf = (sql: string) => Object.fromEntries(fts5Declaration(virtualTableDeclaration(sql)!.args).options);

describe("reading an FTS5 table's declaration", () => {
  it("reads the declarations of migration 0024", () => {
    const fts = virtualTableDeclaration(
      "CREATE VIRTUAL TABLE `products_fts` USING fts5(name, description, brand, model, content='products', content_rowid='id', tokenize='unicode61 remove_diacritics 2')",
    );
    expect(fts?.module).toBe("fts5");
    expect(fts5Declaration(fts!.args)).toEqual({
      columns: ["name", "description", "brand", "model"],
      options: new Map([
        ["content", "products"],
        ["content_rowid", "id"],
        ["tokenize", "unicode61 remove_diacritics 2"],
      ]),
    });
    expect(
      optionsOf(
        "CREATE VIRTUAL TABLE `products_trigram` USING fts5(name, model, content='products', content_rowid='id', tokenize='trigram case_sensitive 0')",
      ),
    ).toMatchObject({ content: "products", content_rowid: "id" });
  });

  it("reads every quoting SQLite and FTS5 accept, options in any case, and comments between arguments", () => {
    expect(optionsOf("create virtual table t using FTS5(a, CONTENT=products, Content_RowID=id)")).toEqual({
      content: "products",
      content_rowid: "id",
    });
    expect(optionsOf(`CREATE VIRTUAL TABLE "a (b)" USING fts5(x, content="it's", content_rowid=[my key])`)).toEqual({
      content: "it's",
      content_rowid: "my key",
    });
    expect(optionsOf("CREATE VIRTUAL TABLE t USING fts5(x, content='o''brien', columnsize=0)")).toEqual({
      content: "o'brien",
      columnsize: "0",
    });
    const commented = virtualTableDeclaration(
      "CREATE VIRTUAL TABLE t /* USING x( */ USING fts5( -- a column\n a UNINDEXED, /* , */ content = `c,d`, prefix='2 3')",
    );
    expect(commented?.module).toBe("fts5");
    expect(fts5Declaration(commented!.args)).toEqual({
      columns: ["a"],
      options: new Map([
        ["content", "c,d"],
        ["prefix", "2 3"],
      ]),
    });
    // A quoted first word is a column's name, as FTS5 reads it, never an option's.
    expect(fts5Declaration(['"content"']).columns).toEqual(["content"]);
    expect(() => fts5Declaration(["'content'='x'"])).toThrow(DeclarationError);
  });

  it("tells other modules and statements apart, and refuses text it cannot read", () => {
    expect(virtualTableDeclaration("CREATE VIRTUAL TABLE v USING fts5vocab(products_fts, 'row')")).toEqual({
      module: "fts5vocab",
      args: ["products_fts", "'row'"],
    });
    expect(virtualTableDeclaration("CREATE VIRTUAL TABLE r USING rtree(id, x0, x1)")?.module).toBe("rtree");
    expect(virtualTableDeclaration("CREATE VIRTUAL TABLE e USING fts5")).toEqual({ module: "fts5", args: [] });
    expect(virtualTableDeclaration("CREATE TABLE t (a, b)")).toBeNull();
    expect(() => virtualTableDeclaration("CREATE VIRTUAL TABLE t USING fts5(a, content='x")).toThrow(DeclarationError);
    expect(() => virtualTableDeclaration("CREATE VIRTUAL TABLE t USING fts5(a, content='x'")).toThrow(DeclarationError);
    expect(() => fts5Declaration(["content = a b"])).toThrow(DeclarationError);
    expect(() => fts5Declaration(["a b c"])).toThrow(DeclarationError);
    expect(() => fts5Declaration(["content = "])).toThrow(DeclarationError);
  });
});
