import { createRouter } from "../../../../lib/router";
import * as handlers from "./pairing.handlers";
import * as routes from "./pairing.routes";

/** Camera pairing: the device registers and polls, the owner claims; mount under `/v1`. */
export const pairingRouter = createRouter()
  .openapi(routes.registerPairing, handlers.registerPairing)
  .openapi(routes.pollPairing, handlers.pollPairing)
  .openapi(routes.claimPairing, handlers.claimPairing);
