import { Response, type Request } from "miniflare";
import { FAKE_EMAIL_API_KEY } from "./fake-upstream-config.ts";

/**
 * Stands in for the internet during tests (this machine has none): every outbound `fetch()` of
 * the Worker under test lands here, in the Node process. Each host behaves like one kind of
 * upstream; anything else is a 502, so a test never passes by reaching a real service.
 */
export async function fakeUpstream(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (url.host === "upstream.test") {
    switch (url.pathname) {
      case "/ok":
        return new Response("ok", { status: 200 });
      case "/redirect":
        return new Response(null, { status: 302, headers: { Location: "https://upstream.test/ok" } });
      case "/slow":
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        return new Response("late", { status: 200 });
    }
  }
  if (url.host === "mail.upstream.test" && url.pathname === "/emails" && request.method === "POST") {
    if (request.headers.get("authorization") !== `Bearer ${FAKE_EMAIL_API_KEY}`) {
      return Response.json({ message: "invalid api key" }, { status: 401 });
    }
    const body = (await request.json()) as { from?: string; to?: string[]; subject?: string; text?: string };
    const valid = body.from && Array.isArray(body.to) && body.to.length === 1 && body.subject && body.text;
    if (!valid) return Response.json({ message: "invalid message" }, { status: 422 });
    return Response.json({ id: `fake-${body.to![0]}` }, { status: 200 });
  }
  return new Response(`no fake upstream for ${url.origin}`, { status: 502 });
}
