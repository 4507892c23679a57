import { createRouter } from "../../lib/router";

/** `/v1/admin/users...` and `/v1/admin/cache...`; `adminOnly` (app.ts) has already checked the caller. */
export const adminRouter = createRouter();
