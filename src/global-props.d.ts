// Types `ctx.exports` / `exports` from "cloudflare:workers" (wrangler types omits this when
// the runtime types come from @cloudflare/workers-types).
declare namespace Cloudflare {
  interface GlobalProps {
    mainModule: typeof import("./index");
    durableNamespaces: "CameraRelay";
  }
}
