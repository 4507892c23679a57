import { createRoute } from "@hono/zod-openapi";
import { SIGNED_IN } from "../../../lib/openapi";
import { problemResponses } from "../../../lib/problem";
import { NewReleaseSchema, ReleaseSchema, ReleaseVersionParamsSchema } from "../../releases/releases.schemas";

// No `authenticate` here: `adminOnly` (app.ts) guards all of /v1/admin/* before these run.
const ADMIN_ONLY =
  "Superusers with TOTP only: anonymous 401, anyone else 403 `SUPERUSER_REQUIRED`, a superuser without TOTP 403 `ADMIN_TOTP_REQUIRED`.";

const BUILD =
  "The build runs on the release queue, never in the request: it takes the snapshot (the base products, with every component, " +
  "of accounts that accepted the contributor terms, their bills of materials and clean images, and the reference tables, all at " +
  "one instant: `snapshot_at`), writes every table as CSV and Parquet, copies the images, and writes datapackage.json, " +
  "SHA256SUMS, README.md and CITATION.cff under the release, then publishes it. Follow it with `GET /v1/releases/{version}` " +
  "(`progress.records_written`); it ends `published` or `failed` with a `failure_reason`. With DataCite configured, its DOIs are " +
  "registered after publication (`doi_status`), never holding it up. Who the release names as publisher and creator is the " +
  "configuration's at this request (`RELEASE_PUBLISHER`, `RELEASE_CREATOR`, `RELEASE_CREATOR_ROR`).";

export const createRelease = createRoute({
  method: "post",
  path: "/admin/releases",
  operationId: "adminCreateRelease",
  tags: ["Admin"],
  summary: "Build a dataset release",
  description:
    `Creates release \`version\` in state \`building\` and queues its build; answers 202 at once. ${BUILD} A version that exists ` +
    `(whatever its state) is 409 \`ALREADY_EXISTS\`: versions are never reused. The queue unreachable: 503 \`RELEASE_QUEUE_UNAVAILABLE\`, ` +
    `nothing created. Audited. ${ADMIN_ONLY}`,
  security: SIGNED_IN,
  request: { body: { required: true, content: { "application/json": { schema: NewReleaseSchema } } } },
  responses: {
    202: {
      description: "The release, building.",
      headers: { Location: { schema: { type: "string" }, description: "The release's URL." } },
      content: { "application/json": { schema: ReleaseSchema } },
    },
    ...problemResponses(401, 403, 409, 413, 415, 422, 503),
  },
});

export const retryRelease = createRoute({
  method: "post",
  path: "/admin/releases/{version}/retry",
  operationId: "adminRetryRelease",
  tags: ["Admin"],
  summary: "Build a failed release again",
  description:
    "Starts a new attempt of a `failed` release, or of a `building` one whose build stalled (no progress for 10 minutes: its " +
    "queue messages were lost), from a NEW snapshot: the earlier attempt's files and staging rows are discarded, and its " +
    "messages, should any still arrive, are ignored. Answers 202 with the release building again. A build that fails for a " +
    "passing reason (storage, database) is retried by the queue itself from its last checkpoint, up to 3 attempts in a row, " +
    "before it is marked failed. Published: 409 `RELEASE_PUBLISHED`; building and alive: 409 `RELEASE_BUILDING`; " +
    "unknown: 404. The queue unreachable: 503 `RELEASE_QUEUE_UNAVAILABLE`, and the release is failed again (retry once more). " +
    `Audited. ${ADMIN_ONLY}`,
  security: SIGNED_IN,
  request: { params: ReleaseVersionParamsSchema },
  responses: {
    202: { description: "The release, building again.", content: { "application/json": { schema: ReleaseSchema } } },
    ...problemResponses(401, 403, 404, 409, 503),
  },
});

export const retryDoi = createRoute({
  method: "post",
  path: "/admin/releases/{version}/doi",
  operationId: "adminRetryReleaseDoi",
  tags: ["Admin"],
  summary: "Register a release's DOIs again",
  description:
    "Starts the DataCite registration of a published release again, from its first attempt, when it is `failed` (DataCite refused " +
    "the metadata or the credentials, the DOI is taken by another record, or it was down for every attempt), or `pending` without " +
    "progress for two hours (its queue message was lost). Answers 202 with the release, `doi_status` `pending`; follow it with " +
    "`GET /v1/releases/{version}`. The registration never changes the release's files or its publication. Registered: 409 " +
    "`DOI_REGISTERED`; under way: 409 `DOI_PENDING`; published without DataCite: 409 `DOI_DISABLED`; DataCite not configured: 409 " +
    "`DATACITE_NOT_CONFIGURED`; not published: 409 `RELEASE_NOT_PUBLISHED`; unknown: 404. The queue unreachable: 503 " +
    `\`RELEASE_QUEUE_UNAVAILABLE\` (it stays failed). Audited. ${ADMIN_ONLY}`,
  security: SIGNED_IN,
  request: { params: ReleaseVersionParamsSchema },
  responses: {
    202: { description: "The release, its registration pending again.", content: { "application/json": { schema: ReleaseSchema } } },
    ...problemResponses(401, 403, 404, 409, 503),
  },
});
