import { describe, expect, it } from "vitest";
import { commands, shellBlocks } from "../../scripts/check-docs-commands.mjs";

const MARKDOWN = [
  "# Title", // 1
  "", // 2
  "```sh", // 3
  'curl -s localhost:8787/live   # {"status":"alive"}', // 4
  "# a comment line", // 5
  "curl -si -X DELETE localhost:8787/v1/units \\", // 6
  "  -H 'X-Request-ID: x'    # 405, and 404 when gone", // 7
  "```", // 8
  "", // 9
  "<!-- check:docs skip: needs a Cloudflare account -->", // 10
  "", // 11
  "```bash", // 12
  "npx wrangler d1 create relab", // 13
  "```", // 14
  "1. Deploy:", // 15
  "   ```sh", // 16
  "   npm run deploy", // 17
  "   ```", // 18
  "```ts", // 19
  "const x = 1;", // 20
  "```", // 21
].join("\n");

describe("check:docs reading Markdown", () => {
  it("finds the shell blocks (indented ones too, other languages not), with where they start and their skip reason", () => {
    const blocks = shellBlocks("README.md", MARKDOWN);
    expect(blocks.map(({ line, skip, lines }) => ({ line, skip, lines }))).toEqual([
      { line: 4, skip: null, lines: MARKDOWN.split("\n").slice(3, 7) },
      { line: 13, skip: "needs a Cloudflare account", lines: ["npx wrangler d1 create relab"] },
      { line: 17, skip: null, lines: ["npm run deploy"] },
    ]);
  });

  it("joins continued lines into one command, drops comment lines, and reads the 4xx its comment announces", () => {
    const [block] = shellBlocks("README.md", MARKDOWN);
    expect(commands(block!)).toEqual([
      { where: "README.md:4", text: 'curl -s localhost:8787/live   # {"status":"alive"}', allowed: [] },
      {
        where: "README.md:6",
        text: "curl -si -X DELETE localhost:8787/v1/units \\\n  -H 'X-Request-ID: x'    # 405, and 404 when gone",
        allowed: ["405", "404"],
      },
    ]);
  });

  it("does not take a # inside a word for a comment", () => {
    const block = { file: "f.md", line: 1, lines: ["X=$(curl -s u | sed -n 's/.*#token=//p')"] };
    expect(commands(block)).toEqual([{ where: "f.md:1", text: "X=$(curl -s u | sed -n 's/.*#token=//p')", allowed: [] }]);
  });
});
