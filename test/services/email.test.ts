import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config";
import { createLogger } from "../../src/lib/logger";
import { listOutbox } from "../../src/services/platform/dev-outbox";
import { createEmailSender, EmailDeliveryError } from "../../src/services/platform/email";
import { FAKE_EMAIL_API_KEY } from "../support/fake-upstream-config";
import { PRODUCTION_VARS } from "../support/http";

const silent = createLogger({}, () => {});
const message = { to: "reader@example.org", subject: "Verify your address", text: "Hello" };

function providerConfig(vars: Record<string, string>) {
  return loadConfig({
    ...env,
    ...PRODUCTION_VARS,
    EMAIL_PROVIDER_URL: "https://mail.upstream.test/emails",
    EMAIL_PROVIDER_API_KEY: FAKE_EMAIL_API_KEY,
    ...vars,
  });
}

describe("email sender", () => {
  it("in development keeps the message in the outbox", async () => {
    await createEmailSender(loadConfig(env), env.KV, silent).send(message);
    const items = await listOutbox(env.KV, message.to);
    expect(items[0]).toMatchObject(message);
  });

  it("elsewhere posts to the provider through the allow-list", async () => {
    const sender = createEmailSender(providerConfig({}), env.KV, silent);
    await expect(sender.send(message)).resolves.toBeUndefined();
  });

  it("fails when the provider refuses (here: a wrong API key)", async () => {
    const sender = createEmailSender(providerConfig({ EMAIL_PROVIDER_API_KEY: "wrong" }), env.KV, silent);
    await expect(sender.send(message)).rejects.toThrow(EmailDeliveryError);
  });

  it("fails clearly when the provider is not configured", async () => {
    const sender = createEmailSender(providerConfig({ EMAIL_PROVIDER_URL: "" }), env.KV, silent);
    await expect(sender.send(message)).rejects.toThrow(/EMAIL_PROVIDER_URL/);
  });
});
