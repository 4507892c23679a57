import { createRouter } from "../../lib/router";

export const taxonomiesRouter = createRouter();
