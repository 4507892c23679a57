import { Hono } from "hono";
import type { AppEnv } from "../../../../env";
import { connectTunnel } from "./tunnel.handlers";

/**
 * The camera tunnel (a WebSocket, not REST): a plain router, so it stays out of the OpenAPI
 * schema (spec: the tunnel is not part of the generated REST schema); mount under `/v1`.
 */
export const tunnelRouter = new Hono<AppEnv>().get("/plugins/rpi-cam/ws/connect", connectTunnel);
