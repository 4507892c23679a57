/** The queue of release builds (wrangler.jsonc, `RELEASE_QUEUE`): one message is one slice of one build, or the clean-up after one. */
export const RELEASE_QUEUE = "relab-releases";

/** Work on this attempt of this release's build (one slice). */
export interface ReleaseBuildMessage {
  type: "release.build";
  version: string;
  build_id: string;
}

/** Empty the staging tables of this attempt, which has been published (sent by the slice that published it). */
export interface ReleaseCleanupMessage {
  type: "release.cleanup";
  version: string;
  build_id: string;
}

export type ReleaseMessage = ReleaseBuildMessage | ReleaseCleanupMessage;

/** Whether a queue message's body is a `ReleaseMessage`. */
export function isReleaseMessage(body: unknown): body is ReleaseMessage {
  const message = body as Partial<ReleaseMessage> | null;
  return (
    (message?.type === "release.build" || message?.type === "release.cleanup") &&
    typeof message.version === "string" &&
    typeof message.build_id === "string"
  );
}
