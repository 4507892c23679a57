// Types for vitest.config.ts, which builds the docs assets before the Workers pool reads wrangler.jsonc.
export declare const ASSETS_DIR: string;
export declare function buildDocsAssets(root?: string): { directory: string; version: string; copied: number };
