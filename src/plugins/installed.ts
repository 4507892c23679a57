import type { Plugin } from "../plugin";
import { rpiCamPlugin } from "./rpi-cam";

/**
 * The plugins built into this Worker. Only `src/app.ts` and `src/index.ts` read this list (the
 * core never imports a plugin); whether each one runs is its own configuration's call.
 */
export const INSTALLED_PLUGINS: readonly Plugin[] = [rpiCamPlugin];
