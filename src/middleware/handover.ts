import type { SessionUser } from "../auth/session-user";
import type { LimitDecision, Services } from "../container";
import type { SessionInfo } from "../env";
import type { Logger } from "../lib/logger";

/** What every request starts with: its id, its logger, its client address and when it began. */
export interface BegunRequest {
  requestId: string;
  log: Logger;
  clientIp: string | null;
  started: number;
}

/**
 * A request the fast lane (src/fast-lane.ts) began and gives to the app, because the copy it
 * meant to serve is no longer current (or gone, or not for this viewer: a revoked token, other
 * powers) or the rate limit refused it: what the lane already did is not done again, and a
 * refusal is answered as the app answers it. The app's
 * middleware keeps its id and logger, its service container (the D1 session and its round trips
 * so far) and the rate-limit units it counted, and `cachedRead` reads afresh without looking up
 * the copy (`staleKey`) that the validator found out of date.
 */
export interface Handover extends BegunRequest {
  services: Services;
  /** The units counted for the request's general bucket; null when rate limits are off or failed open. */
  limits: LimitDecision | null;
  /** Why counting refused the request (the 429 or 503 to answer), when it did. */
  refusal?: unknown;
  /** The key of the copy the lane would not serve (out of date, not validated, or not for this viewer): the app reads afresh without it. */
  staleKey: string | null;
  /**
   * What the presented token's check found, when the lane ran it (`userId`: the account the
   * token names; `user` null: revoked, read as anonymous): the app does not check it again.
   */
  checked?: { userId: number; user: SessionUser | null; session: SessionInfo | null };
}

const handovers = new WeakMap<Request, Handover>();

/** Marks `request` as begun by the fast lane, before it goes to the app. */
export function handOver(request: Request, handover: Handover): void {
  handovers.set(request, handover);
}

/** What the fast lane did for `request`, if it began it. */
export function handoverOf(request: Request): Handover | undefined {
  return handovers.get(request);
}
