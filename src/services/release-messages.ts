/** The queue of release builds (wrangler.jsonc, `RELEASE_QUEUE`): one message is one slice of one build. */
export const RELEASE_QUEUE = "relab-releases";

/** The one message of `RELEASE_QUEUE`: work on this attempt of this release's build. */
export interface ReleaseMessage {
  type: "release.build";
  version: string;
  build_id: string;
}

/** Whether a queue message's body is a `ReleaseMessage`. */
export function isReleaseMessage(body: unknown): body is ReleaseMessage {
  const message = body as Partial<ReleaseMessage> | null;
  return message?.type === "release.build" && typeof message.version === "string" && typeof message.build_id === "string";
}
