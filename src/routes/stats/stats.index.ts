import { createRouter } from "../../lib/router";

export const statsRouter = createRouter();
