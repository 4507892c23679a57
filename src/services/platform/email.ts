import type { AppConfig } from "../../config";
import type { EmailMessage, EmailSender, Services } from "../../container";
import type { Logger } from "../../lib/logger";
import { safeFetch } from "../../lib/outbound";
import { storeInOutbox } from "./dev-outbox";

export class EmailDeliveryError extends Error {
  override name = "EmailDeliveryError";
}

/**
 * The sender for the running environment: development keeps every message in the local outbox
 * (KV, readable at `/__dev/outbox`); any other environment posts to the configured provider.
 */
export function createEmailSender(config: AppConfig, kv: KVNamespace, log: Logger): EmailSender {
  if (config.isDevelopment) {
    return {
      async send(message) {
        await storeInOutbox(kv, message);
        log.info("email kept in the development outbox", { to: message.to, subject: message.subject });
      },
    };
  }
  return providerSender(config, log);
}

/**
 * Posts `{from, to, subject, text}` as JSON with a bearer API key to `EMAIL_PROVIDER_URL`
 * (the shape of Resend's `/emails` endpoint), through the outbound allow-list.
 */
function providerSender(config: AppConfig, log: Logger): EmailSender {
  return {
    async send(message) {
      const { providerUrl, apiKey, from } = config.email;
      if (!providerUrl || !apiKey) {
        throw new EmailDeliveryError("EMAIL_PROVIDER_URL and EMAIL_PROVIDER_API_KEY must be set");
      }
      const response = await safeFetch(config.outbound, providerUrl, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ from, to: [message.to], subject: message.subject, text: message.text }),
      });
      // The body is drained either way so the connection can be reused; it is never logged.
      await response.arrayBuffer();
      if (!response.ok) {
        log.error("email provider refused a message", { status: response.status, to: message.to });
        throw new EmailDeliveryError(`Email provider answered ${response.status}`);
      }
      log.info("email sent", { to: message.to, subject: message.subject });
    },
  };
}

/** Sends an email, logging instead of failing when delivery does not work: the change it reports has already happened. */
export async function sendQuietly(svc: Pick<Services, "email" | "log">, message: EmailMessage): Promise<void> {
  try {
    await svc.email.send(message);
  } catch (error) {
    svc.log.error("email delivery failed", { subject: message.subject, error });
  }
}
