import { createRouter } from "../../../../lib/router";
import * as handlers from "./cameras.handlers";
import * as routes from "./cameras.routes";
import * as relayHandlers from "./relay/relay.handlers";
import * as relayRoutes from "./relay/relay.routes";

/** The app's camera routes (`/plugins/rpi-cam/cameras[/{camera_id}[/...]]`); mount under `/v1`. */
export const camerasRouter = createRouter()
  .openapi(routes.listCameras, handlers.listCameras)
  .openapi(routes.getCamera, handlers.getCamera)
  .openapi(routes.updateCamera, handlers.updateCamera)
  .openapi(routes.deleteCamera, handlers.deleteCamera)
  .openapi(routes.getCameraStatus, handlers.getCameraStatus)
  .openapi(routes.getCameraTelemetry, handlers.getCameraTelemetry)
  .openapi(routes.getCameraLocalAccess, handlers.getCameraLocalAccess)
  .openapi(routes.getCameraPreviewThumbnail, handlers.getCameraPreviewThumbnail)
  .openapi(relayRoutes.captureImage, relayHandlers.captureImage)
  .openapi(relayRoutes.sendCommand, relayHandlers.sendCommand)
  .openapi(relayRoutes.getHlsFile, relayHandlers.getHlsFile)
  .openapi(relayRoutes.startRecordingStream, relayHandlers.startRecordingStream)
  .openapi(relayRoutes.getRecordingStream, relayHandlers.getRecordingStream)
  .openapi(relayRoutes.stopRecordingStream, relayHandlers.stopRecordingStream);
