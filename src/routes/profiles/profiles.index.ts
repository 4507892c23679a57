import { createRouter } from "../../lib/router";

/** Public profiles and user-scoped product lists. */
export const profilesRouter = createRouter();
