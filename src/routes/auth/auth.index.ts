import { createRouter } from "../../lib/router";
import * as handlers from "./auth.handlers";
import * as routes from "./auth.routes";
import * as bearerHandlers from "./bearer/bearer.handlers";
import * as bearerRoutes from "./bearer/bearer.routes";
import * as mfaHandlers from "./mfa/mfa.handlers";
import * as mfaRoutes from "./mfa/mfa.routes";
import * as sessionHandlers from "./session/session.handlers";
import * as sessionRoutes from "./session/session.routes";

export const authRouter = createRouter()
  .openapi(routes.register, handlers.register)
  .openapi(routes.verify, handlers.verify)
  .openapi(routes.requestVerifyToken, handlers.requestVerifyToken)
  .openapi(routes.validateEmail, handlers.validateEmail)
  .openapi(routes.forgotPassword, handlers.forgotPassword)
  .openapi(routes.resetPassword, handlers.resetPassword)
  .openapi(bearerRoutes.bearerLogin, bearerHandlers.login)
  .openapi(bearerRoutes.bearerRefresh, bearerHandlers.refresh)
  .openapi(bearerRoutes.bearerLogout, bearerHandlers.logout)
  .openapi(sessionRoutes.sessionLogin, sessionHandlers.login)
  .openapi(sessionRoutes.sessionRefresh, sessionHandlers.refresh)
  .openapi(sessionRoutes.sessionLogout, sessionHandlers.logout)
  .openapi(sessionRoutes.revokeAllSessions, sessionHandlers.revokeAll)
  .openapi(mfaRoutes.totpSetup, mfaHandlers.totpSetup)
  .openapi(mfaRoutes.totpConfirm, mfaHandlers.totpConfirm)
  .openapi(mfaRoutes.totpDisable, mfaHandlers.totpDisable)
  .openapi(mfaRoutes.regenerateRecoveryCodes, mfaHandlers.regenerateRecoveryCodes)
  .openapi(mfaRoutes.mfaChallenge, mfaHandlers.mfaChallenge);
