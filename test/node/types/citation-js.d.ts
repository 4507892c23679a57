// The little of citation-js the Node tests use (its packages ship no type declarations).
declare module "@citation-js/core" {
  export class Cite {
    static async(data: unknown): Promise<{ data: Record<string, unknown>[] }>;
  }
}
declare module "@citation-js/plugin-bibtex";
declare module "@citation-js/plugin-ris";
