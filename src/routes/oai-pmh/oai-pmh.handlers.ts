import type { Context } from "hono";
import type { AppEnv, AppRouteHandler } from "../../env";
import { requestOrigin } from "../../lib/http";
import { answerOai } from "../../services/releases/oai";
import type * as routes from "./oai-pmh.routes";

function xml(c: Context<AppEnv>, document: string): Response {
  return c.body(document, 200, { "Content-Type": "text/xml; charset=utf-8" });
}

/** The pairs of a query or form, in order and decoded, repeated names kept. */
const pairsOf = (params: URLSearchParams): [string, string][] => [...params.entries()];

export const oaiGet: AppRouteHandler<typeof routes.oaiGet> = async (c) =>
  xml(c, await answerOai(c.get("services"), pairsOf(new URL(c.req.url).searchParams), requestOrigin(c))) as never;

export const oaiPost: AppRouteHandler<typeof routes.oaiPost> = async (c) =>
  xml(c, await answerOai(c.get("services"), pairsOf(new URLSearchParams(await c.req.text())), requestOrigin(c))) as never;
