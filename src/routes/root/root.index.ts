import { createRouter } from "../../lib/router";
import { getIndexHandler } from "./root.handlers";
import { getIndex } from "./root.routes";

export const rootRouter = createRouter().openapi(getIndex, getIndexHandler);
