// Types for test/node/check-docs-commands.test.ts, which tests how the script reads Markdown.
export interface ShellBlock {
  file: string;
  line: number;
  skip: string | null;
  lines: string[];
}
export interface DocsCommand {
  where: string;
  text: string;
  allowed: string[];
}
export declare function shellBlocks(file: string, text: string): ShellBlock[];
export declare function commands(block: Pick<ShellBlock, "file" | "line" | "lines">): DocsCommand[];
