// The camera's pictures are generated, not taken, and the device uploads them itself: the
// relayed command only carries the answer, never the image.
import { randomInt } from "node:crypto";
import { PhotonImage } from "@cf-wasm/photon/node";
import { log } from "./log.mjs";
import { fail, isObject, ok } from "./replies.mjs";
import { deviceFetch, problemDetail } from "./state.mjs";

// A gradient whose colours shift with a seed, so no two captures have the same bytes.
function renderJpeg(width, height, seed) {
  const pixels = new Uint8Array(width * height * 4);
  const cx = (seed * 7919) % width;
  const cy = (seed * 104729) % height;
  const radius = Math.min(width, height) / 5;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = (y * width + x) * 4;
      const inDisc = (x - cx) ** 2 + (y - cy) ** 2 < radius ** 2;
      pixels[at] = inDisc ? 255 - ((seed * 13) & 255) : ((x * 255) / width + seed) & 255;
      pixels[at + 1] = inDisc ? 240 : ((y * 255) / height + seed * 3) & 255;
      pixels[at + 2] = (((x ^ y) & 0x3f) + seed * 5) & 255;
      pixels[at + 3] = 255;
    }
  }
  const image = new PhotonImage(pixels, width, height);
  try {
    return image.get_bytes_jpeg(85);
  } finally {
    image.free();
  }
}

const freshSeed = () => (Date.now() ^ randomInt(1 << 30)) & 0x7fffffff;

export async function uploadPreviewThumbnail(device) {
  const form = new FormData();
  form.append("file", new Blob([renderJpeg(160, 120, freshSeed())], { type: "image/jpeg" }), "preview.jpg");
  try {
    const response = await deviceFetch(device, "/preview-thumbnail-upload", { method: "POST", body: form });
    log(`preview thumbnail upload -> ${response.status}${response.ok ? "" : ` ${await problemDetail(response)}`}`);
  } catch (error) {
    log(`preview thumbnail upload failed: ${error.message}`);
  }
}

export async function capture(device, camera, body) {
  if (!isObject(body) || !Number.isInteger(body.product_id) || body.product_id <= 0) {
    return fail(422, "A capture needs a positive integer product_id.");
  }
  const capturedAt = new Date();
  const metadata = {
    ExposureTime: camera.controls.ExposureTime,
    AnalogueGain: camera.controls.AnalogueGain,
    LensPosition: camera.controls.LensPosition,
    captured_at: capturedAt.toISOString(),
  };
  const [width, height] = camera.resolution;
  const form = new FormData();
  const filename = `capture-${capturedAt.toISOString().replace(/[-:.]/g, "")}.jpg`;
  form.append("file", new Blob([renderJpeg(width, height, freshSeed())], { type: "image/jpeg" }), filename);
  form.append("capture_metadata", JSON.stringify(metadata));
  const upload = { product_id: body.product_id };
  if (typeof body.description === "string" && body.description !== "") upload.description = body.description;
  form.append("upload_metadata", JSON.stringify(upload));

  let response;
  try {
    response = await deviceFetch(device, "/image-upload", { method: "POST", body: form });
  } catch (error) {
    log(`image upload failed: ${error.message}`);
    return fail(503, `The upload did not reach the server: ${error.message}`);
  }
  if (response.status !== 201) {
    const detail = await problemDetail(response);
    log(`image upload -> ${response.status} ${detail}`);
    return fail(response.status, detail);
  }
  const { image_id, image_url } = await response.json();
  log(`image upload -> 201 ${image_id} (product ${body.product_id})`);
  return ok({ status: "uploaded", image_id, image_url, metadata }, 201);
}
