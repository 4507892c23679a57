// Wrangler and the vitest pool hand `.wasm` imports over as precompiled modules.
declare module "*.wasm" {
  const module: WebAssembly.Module;
  export default module;
}
