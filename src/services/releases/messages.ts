/** The queue of release builds (wrangler.jsonc, `RELEASE_QUEUE`): one message is one slice of one build, the clean-up after one, or a DOI registration. */
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

/** Register (or retry registering) the DOIs of this published release (src/services/releases/doi.ts). */
export interface ReleaseDoiMessage {
  type: "release.doi";
  version: string;
}

export type ReleaseMessage = ReleaseBuildMessage | ReleaseCleanupMessage | ReleaseDoiMessage;

/** Whether a queue message's body is a `ReleaseMessage`. */
export function isReleaseMessage(body: unknown): body is ReleaseMessage {
  const message = body as Partial<ReleaseBuildMessage> | Partial<ReleaseDoiMessage> | null;
  if (message?.type === "release.doi") return typeof message.version === "string";
  return (
    (message?.type === "release.build" || message?.type === "release.cleanup") &&
    typeof message.version === "string" &&
    typeof (message as Partial<ReleaseBuildMessage>).build_id === "string"
  );
}
