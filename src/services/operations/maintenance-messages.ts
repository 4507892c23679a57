/** The queue of maintenance jobs (wrangler.jsonc, `MAINTENANCE_QUEUE`): one message is one slice of one backup. */
export const MAINTENANCE_QUEUE = "relab-maintenance";

/** Work on this backup run (one slice). */
export interface BackupRunMessage {
  type: "backup.run";
  id: string;
}

export type MaintenanceMessage = BackupRunMessage;

/** Whether a queue message's body is a `MaintenanceMessage`. */
export function isMaintenanceMessage(body: unknown): body is MaintenanceMessage {
  const message = body as Partial<MaintenanceMessage> | null;
  return message?.type === "backup.run" && typeof message.id === "string";
}
