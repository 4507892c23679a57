import { describe, expect, it } from "vitest";
import { LIMITS, planRequestLimits, requestCategory, WRONG_SECRET_BUDGET } from "../../../src/rate-limits/policy";

describe("the limits table", () => {
  it("holds exactly the limits of the spec", () => {
    expect(LIMITS).toStrictEqual({
      "read-ip": { key: "ip", amount: 300, windowSeconds: 60, kind: "request", onStoreFailure: "open" },
      "write-ip": { key: "ip", amount: 120, windowSeconds: 60, kind: "request", onStoreFailure: "open" },
      "upload-ip": { key: "ip", amount: 30, windowSeconds: 60, kind: "request", onStoreFailure: "open" },
      "read-user": { key: "user", amount: 1500, windowSeconds: 60, kind: "request", onStoreFailure: "open" },
      "write-user": { key: "user", amount: 600, windowSeconds: 60, kind: "request", onStoreFailure: "open" },
      "upload-user": { key: "user", amount: 300, windowSeconds: 60, kind: "request", onStoreFailure: "open" },
      "export-ip": { key: "ip", amount: 30, windowSeconds: 60, kind: "request", onStoreFailure: "open" },
      "export-signed-in-ip": { key: "ip", amount: 90, windowSeconds: 60, kind: "request", onStoreFailure: "open" },
      "login-ip": { key: "ip", amount: 60, windowSeconds: 60, kind: "request", onStoreFailure: "closed" },
      "register-ip": { key: "ip", amount: 5, windowSeconds: 3600, kind: "request", onStoreFailure: "closed" },
      "verify-ip": { key: "ip", amount: 3, windowSeconds: 3600, kind: "request", onStoreFailure: "closed" },
      "request-verification-ip": { key: "ip", amount: 3, windowSeconds: 3600, kind: "request", onStoreFailure: "closed" },
      "forgot-password-ip": { key: "ip", amount: 3, windowSeconds: 3600, kind: "request", onStoreFailure: "closed" },
      "reset-password-ip": { key: "ip", amount: 3, windowSeconds: 3600, kind: "request", onStoreFailure: "closed" },
      "forgot-password-email": { key: "email", amount: 3, windowSeconds: 3600, kind: "guard", onStoreFailure: "closed" },
      "failed-login": { key: "email", amount: 3, windowSeconds: 60, kind: "guard", onStoreFailure: "closed" },
      "wrong-secret-minute": { key: "user", amount: 3, windowSeconds: 60, kind: "guard", onStoreFailure: "closed" },
      "wrong-secret-day": { key: "user", amount: 100, windowSeconds: 86_400, kind: "guard", onStoreFailure: "closed" },
      "pairing-register-ip": { key: "ip", amount: 10, windowSeconds: 60, kind: "request", onStoreFailure: "open" },
      "pairing-claim-ip": { key: "ip", amount: 10, windowSeconds: 60, kind: "request", onStoreFailure: "closed" },
      "pairing-claim-code": { key: "pairing-code", amount: 5, windowSeconds: 600, kind: "guard", onStoreFailure: "closed" },
      "camera-connect-ip": { key: "ip", amount: 30, windowSeconds: 60, kind: "request", onStoreFailure: "open" },
      "camera-connect-camera": { key: "camera", amount: 12, windowSeconds: 60, kind: "request", onStoreFailure: "open" },
    });
  });

  it("lets only the general buckets and the camera's request rates fail open", () => {
    const open = Object.entries(LIMITS)
      .filter(([, spec]) => spec.onStoreFailure === "open")
      .map(([name]) => name)
      .sort();
    expect(open).toEqual(
      [
        "export-ip",
        "export-signed-in-ip",
        "read-ip",
        "read-user",
        "upload-ip",
        "upload-user",
        "write-ip",
        "write-user",
        // Device registrations and tunnel handshakes: the assertion (D1) is the bound that fails closed.
        "pairing-register-ip",
        "camera-connect-ip",
        "camera-connect-camera",
      ].sort(),
    );
    const guards = Object.entries(LIMITS)
      .filter(([, spec]) => spec.kind === "guard")
      .map(([name]) => name);
    expect(guards).toEqual(["forgot-password-email", "failed-login", "wrong-secret-minute", "wrong-secret-day", "pairing-claim-code"]);
  });

  it("shares one wrong-secret budget, per minute and per day", () => {
    expect(WRONG_SECRET_BUDGET).toEqual(["wrong-secret-minute", "wrong-secret-day"]);
  });
});

const UPLOAD_PATHS = [
  "/v1/products/12/images",
  "/v1/products/12/files",
  "/v1/components/7/images",
  "/v1/components/7/files",
  "/v1/plugins/rpi-cam/device/cameras/abc/image-upload",
  "/v1/plugins/rpi-cam/device/cameras/abc/preview-thumbnail-upload",
];
const EXPORT_PATHS = ["/v1/products/export", "/v1/products/12/export"];

describe("requestCategory", () => {
  it.each([
    ["GET", "read"],
    ["HEAD", "read"],
    ["POST", "write"],
    ["PUT", "write"],
    ["PATCH", "write"],
    ["DELETE", "write"],
  ])("puts %s on an ordinary path in the %s bucket", (method, category) => {
    expect(requestCategory(method, "/v1/products/12")).toBe(category);
  });

  it.each(UPLOAD_PATHS)("counts POST %s as an upload", (path) => {
    expect(requestCategory("POST", path)).toBe("upload");
  });

  it.each(UPLOAD_PATHS)("counts GET %s as a read and PUT/DELETE as writes", (path) => {
    expect(requestCategory("GET", path)).toBe("read");
    expect(requestCategory("HEAD", path)).toBe("read");
    expect(requestCategory("PUT", path)).toBe("write");
    expect(requestCategory("DELETE", path)).toBe("write");
  });

  it.each(EXPORT_PATHS)("counts GET and HEAD %s as exports, POST as a write", (path) => {
    expect(requestCategory("GET", path)).toBe("export");
    expect(requestCategory("HEAD", path)).toBe("export");
    expect(requestCategory("POST", path)).toBe("write");
  });

  it("matches upload and export paths whole, not by prefix", () => {
    expect(requestCategory("POST", "/v1/products/12/images/3")).toBe("write");
    expect(requestCategory("GET", "/v1/products/12/export/more")).toBe("read");
    expect(requestCategory("GET", "/v1/products/1/2/export")).toBe("read");
  });
});

const AUTH_ROUTES = [
  ["/v1/auth/bearer/login", "login-ip"],
  ["/v1/auth/session/login", "login-ip"],
  ["/v1/auth/register", "register-ip"],
  ["/v1/auth/verify", "verify-ip"],
  ["/v1/auth/request-verify-token", "request-verification-ip"],
  ["/v1/auth/forgot-password", "forgot-password-ip"],
  ["/v1/auth/reset-password", "reset-password-ip"],
] as const;

describe("planRequestLimits", () => {
  it("counts anonymous requests per IP, signed-in requests per user only", () => {
    expect(planRequestLimits("GET", "/v1/products", null)).toEqual({ ip: ["read-ip"], user: [] });
    expect(planRequestLimits("GET", "/v1/products", 42)).toEqual({ ip: [], user: ["read-user"] });
    expect(planRequestLimits("PATCH", "/v1/products/1", null)).toEqual({ ip: ["write-ip"], user: [] });
    expect(planRequestLimits("PATCH", "/v1/products/1", 42)).toEqual({ ip: [], user: ["write-user"] });
    expect(planRequestLimits("POST", "/v1/products/1/images", null)).toEqual({ ip: ["upload-ip"], user: [] });
    expect(planRequestLimits("POST", "/v1/products/1/images", 42)).toEqual({ ip: [], user: ["upload-user"] });
  });

  it("counts exports per IP, and for signed-in users also as reads per user", () => {
    for (const path of EXPORT_PATHS) {
      expect(planRequestLimits("GET", path, null)).toEqual({ ip: ["export-ip"], user: [] });
      expect(planRequestLimits("GET", path, 42)).toEqual({ ip: ["export-signed-in-ip"], user: ["read-user"] });
    }
    // A user id of 0 is still a signed-in user.
    expect(planRequestLimits("GET", "/v1/products/export", 0)).toEqual({ ip: ["export-signed-in-ip"], user: ["read-user"] });
  });

  it.each(AUTH_ROUTES)("adds the IP limit of POST %s to the general bucket", (path, limit) => {
    expect(planRequestLimits("POST", path, null)).toEqual({ ip: ["write-ip", limit], user: [] });
    expect(planRequestLimits("POST", path, 42)).toEqual({ ip: [limit], user: ["write-user"] });
  });

  it.each(AUTH_ROUTES)("adds no route limit to other methods on %s", (path) => {
    expect(planRequestLimits("GET", path, null)).toEqual({ ip: ["read-ip"], user: [] });
    expect(planRequestLimits("PUT", path, null)).toEqual({ ip: ["write-ip"], user: [] });
    expect(planRequestLimits("DELETE", path, 42)).toEqual({ ip: [], user: ["write-user"] });
  });

  it("adds no route limit to other auth paths", () => {
    expect(planRequestLimits("POST", "/v1/auth/bearer/refresh", null)).toEqual({ ip: ["write-ip"], user: [] });
    expect(planRequestLimits("POST", "/v1/auth/register/extra", null)).toEqual({ ip: ["write-ip"], user: [] });
  });
});
