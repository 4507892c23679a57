import { createRouter } from "../../lib/router";

export const materialsRouter = createRouter();
