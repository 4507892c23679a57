import { createRouter } from "../../lib/router";

export const categoriesRouter = createRouter();
