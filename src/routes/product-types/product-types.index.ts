import { createRouter } from "../../lib/router";

export const productTypesRouter = createRouter();
