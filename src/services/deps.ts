import type { AppConfig } from "../config";
import type { Db } from "../db/client";
import type { Logger } from "../lib/logger";
import type { EmailSender } from "./email";
import type { Limiter } from "./rate-limiter";

/** What account services need from the request, without tying them to Hono. */
export interface ServiceDeps {
  db: Db;
  config: AppConfig;
  log: Logger;
  email: EmailSender;
  limiter: Limiter;
  /** Runs work after the response is sent (the execution context's `waitUntil`). */
  defer: (work: Promise<unknown>) => void;
}

/** Sends an email, logging instead of failing when delivery does not work: the change it reports has already happened. */
export async function sendQuietly(deps: Pick<ServiceDeps, "email" | "log">, message: Parameters<EmailSender["send"]>[0]): Promise<void> {
  try {
    await deps.email.send(message);
  } catch (error) {
    deps.log.error("email delivery failed", { subject: message.subject, error });
  }
}
