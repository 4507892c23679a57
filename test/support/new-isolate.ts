import { forgetBootstrap } from "../../src/middleware/bootstrap";
import { freshStorage } from "./fresh-storage";

/**
 * For files that test an isolate's first request (the bootstrap superuser is created then, once
 * per isolate): call at the top of the file. The setup of the shared runtime made the superuser;
 * this wipes storage again, without it, and the isolate forgets its bootstrap, as a new one would:
 * the file's first request is a first request again, against an empty database.
 */
export async function startAsNewIsolate(): Promise<void> {
  await freshStorage();
  forgetBootstrap();
}
