import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { bearer, bearerLogin, postJson, registerUser, verifiedUser } from "../support/accounts";
import { type DeviceAnswer, openTunnel, pairCamera, type RequestFrame, registeredPairing, type TestTunnel } from "../support/camera";
import { api } from "../support/http";
import { encodeJpeg, testPixel } from "../support/image-fixtures";
import { scan, setRole, upload } from "../support/media";
import { bootstrapAdmin, enrolTotp, type TestAuthenticator } from "../support/mfa";
import type { Ref } from "./values";

// The records and accounts the fuzz test's requests refer to, made through the API (and, for
// accounts, the service's own session code) before the first request, so that generated requests
// can reach 2xx answers: ids that exist, an owner and a stranger for each record, a superuser with
// TOTP, an online camera whose test device answers its commands.

/** Who sends a request. `scratch` is a fresh account made for one request that may end its session or delete it. */
export type PrincipalName =
  | "none"
  | "owner"
  | "stranger"
  | "unverified"
  | "admin"
  | "superuser-without-totp"
  | "secret"
  | "scratch"
  | "scratch-totp";

export interface Principal {
  id: number;
  email: string;
  username: string;
  password: string;
  accessToken: string;
  refreshToken: string;
  authenticator?: TestAuthenticator;
}

async function json<T>(response: Promise<Response>, status: number): Promise<T> {
  const answered = await response;
  expect(answered.status, await answered.clone().text()).toBe(status);
  return (await answered.json()) as T;
}

const principalOf = (user: Awaited<ReturnType<typeof verifiedUser>>): Principal => ({
  id: user.id,
  email: user.email,
  username: user.username,
  password: user.password,
  accessToken: user.tokens.access_token,
  refreshToken: user.tokens.refresh_token,
});

/** A 4×4 PNG-free image: a small baseline JPEG (decodes, thumbnails). */
export const smallJpeg = () => encodeJpeg(8, 8, testPixel);

export class World {
  readonly principals = new Map<PrincipalName, Principal>();
  /** Record ids and values by pool name; a `Ref` picks `index` modulo the pool's length. */
  readonly pools = new Map<string, unknown[]>();
  /** Path parameter assignments by template: one entry names every parameter of the template. */
  readonly paths = new Map<string, Record<string, string>[]>();
  private tunnel?: TestTunnel;
  /** Text only its user (and an administrator) may see: emails, a private profile's username, camera names. */
  private privateTexts: { text: string; of: number }[] = [];

  private constructor(private readonly withCameras: boolean) {}

  /** The world, with cameras when the camera plugin is on. */
  static async create(withCameras: boolean): Promise<World> {
    const world = new World(withCameras);
    await world.build();
    return world;
  }

  pool(name: string): unknown[] {
    const values = this.pools.get(name);
    if (!values || values.length === 0) throw new Error(`no fuzz pool "${name}"`);
    return values;
  }

  private async build(): Promise<void> {
    const admin = await bootstrapAdmin();
    this.principals.set("admin", {
      ...admin,
      username: "admin",
      accessToken: admin.tokens.access_token,
      refreshToken: admin.tokens.refresh_token,
    });
    const owner = principalOf(await verifiedUser("fzowner"));
    // Research files need the lab role.
    await setRole(owner.id, "lab");
    this.principals.set("owner", owner);
    const stranger = principalOf(await verifiedUser("fzstranger"));
    this.principals.set("stranger", stranger);
    const unverified = await registerUser();
    const unverifiedTokens = await bearerLogin(unverified);
    this.principals.set("unverified", {
      ...unverified,
      accessToken: unverifiedTokens.access_token,
      refreshToken: unverifiedTokens.refresh_token,
    });
    const lonelySuperuser = principalOf(await verifiedUser("fzsuper"));
    await env.DB.prepare("UPDATE users SET is_superuser = 1, role = 'lab' WHERE id = ?").bind(lonelySuperuser.id).run();
    this.principals.set("superuser-without-totp", lonelySuperuser);
    const victims = [];
    for (let i = 0; i < 6; i++) victims.push(principalOf(await verifiedUser("fzvictim")));
    // A user whose profile is private: their username, like every user's email, is theirs (and
    // the administrators') to see; nobody else's answer may hold it.
    const secret = principalOf(await verifiedUser("fzsecret"));
    await json(
      api("/v1/users/me", {
        method: "PATCH",
        headers: { ...bearer(secret.accessToken), "content-type": "application/json" },
        body: JSON.stringify({ preferences: { profile_visibility: "private" } }),
      }),
      200,
    );
    this.principals.set("secret", secret);

    const asAdmin = (method: string, path: string, body?: unknown) =>
      api(path, {
        method,
        headers: { ...bearer(admin.tokens.access_token), "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const taxonomy = await json<{ id: number }>(
      asAdmin("POST", "/v1/admin/taxonomies", { name: "Fuzz taxonomy", version: "1", domains: ["products", "materials"] }),
      201,
    );
    const root = await json<{ id: number }>(
      asAdmin("POST", "/v1/admin/categories", { name: "Fuzz root", taxonomy_id: taxonomy.id, external_id: "fz-root" }),
      201,
    );
    const child = await json<{ id: number }>(
      asAdmin("POST", "/v1/admin/categories", { name: "Fuzz child", supercategory_id: root.id }),
      201,
    );
    const steel = await json<{ id: number }>(asAdmin("POST", "/v1/admin/materials", { name: "Fuzz steel", density_kg_m3: 7850 }), 201);
    const glass = await json<{ id: number }>(asAdmin("POST", "/v1/admin/materials", { name: "Fuzz glass" }), 201);
    await json(asAdmin("POST", `/v1/admin/materials/${steel.id}/categories`, { category_ids: [root.id] }), 200);
    const type = await json<{ id: number }>(asAdmin("POST", "/v1/admin/product-types", { name: "Fuzz grinder" }), 201);
    await json(asAdmin("POST", `/v1/admin/product-types/${type.id}/categories`, { category_ids: [root.id] }), 200);

    const create = (principal: Principal, body: unknown) =>
      json<{ id: number; components: { id: number }[]; videos?: { id: number }[] }>(
        postJson("/v1/products", body, bearer(principal.accessToken)),
        201,
      );
    const main = await create(owner, {
      name: "Fuzz grinder",
      brand: "krups",
      model: "GVX2",
      weight_g: 1450,
      product_type_id: type.id,
      components: [{ name: "Motor", amount_in_parent: 1 }],
      bill_of_materials: [{ material_id: steel.id, quantity: 0.4, unit: "kg" }],
      videos: [{ url: "https://www.youtube.com/watch?v=abc123", title: "Teardown" }],
    });
    const second = await create(owner, { name: "Fuzz kettle", brand: "fuzz" });
    const secretProduct = await create(secret, { name: "Hidden owner's toaster", components: [{ name: "Element", amount_in_parent: 1 }] });
    const foreign = await create(stranger, { name: "Stranger lamp", components: [{ name: "Bulb", amount_in_parent: 1 }] });
    const motor = main.components[0]!.id;
    const rotor = (
      await json<{ id: number }>(
        postJson(`/v1/components/${motor}/components`, { name: "Rotor", amount_in_parent: 2 }, bearer(owner.accessToken)),
        201,
      )
    ).id;
    await json(
      postJson(`/v1/components/${motor}/materials`, [{ material_id: glass.id, quantity: 2, unit: "g" }], bearer(owner.accessToken)),
      201,
    );

    // Media on the owner's records, scanned so they are clean and served.
    const productImages: [number, string][] = [];
    const componentImages: [number, string][] = [];
    const productFiles: [number, string][] = [];
    const componentFiles: [number, string][] = [];
    const keys = { images: [] as string[], thumbnails: [] as string[], files: [] as string[] };
    const jpeg = { bytes: smallJpeg(), name: "fuzz.jpg", type: "image/jpeg" };
    const csv = { bytes: new TextEncoder().encode("part,mass_g\r\nscrew,1.2\r\n"), name: "masses.csv", type: "text/csv" };
    for (const [kind, id, images, files] of [
      ["products", main.id, productImages, productFiles],
      ["products", second.id, productImages, productFiles],
      ["components", motor, componentImages, componentFiles],
      ["components", rotor, componentImages, componentFiles],
    ] as const) {
      const image = await json<{ id: string }>(
        upload(`/v1/${kind}/${id}/images`, owner.accessToken, jpeg, { description: "Fuzz image" }),
        201,
      );
      await scan("images", image.id);
      images.push([id, image.id]);
      const file = await json<{ id: string }>(upload(`/v1/${kind}/${id}/files`, owner.accessToken, csv), 201);
      await scan("files", file.id);
      files.push([id, file.id]);
    }
    const served = await json<{ items: { image_url: string; thumbnail_url: string }[] }>(
      api(`/v1/products/${main.id}/images`, { headers: bearer(owner.accessToken) }),
      200,
    );
    for (const item of served.items) {
      keys.images.push(new URL(item.image_url).pathname.split("/").pop()!);
      keys.thumbnails.push(new URL(item.thumbnail_url).pathname.split("/").pop()!);
    }
    const servedFiles = await json<{ items: { file_url: string }[] }>(
      api(`/v1/products/${main.id}/files`, { headers: bearer(owner.accessToken) }),
      200,
    );
    for (const item of servedFiles.items) keys.files.push(new URL(item.file_url).pathname.split("/").pop()!);

    // A published release of the owner's records (the owner accepts the contributor terms), so
    // that the release routes and their files (ranges included) meet generated requests too.
    await json(postJson("/v1/users/me/contributor-terms", { version: 1 }, bearer(owner.accessToken)), 200);
    const release = await this.publishedRelease(asAdmin);

    // Cameras: one online (a test device answers), one paired but never connected.
    // Camera names are their owner's alone: unique, so an answer to anyone else can be searched for them.
    const cameraNames = [`Fuzz bench ${crypto.randomUUID()}`, `Fuzz shelf ${crypto.randomUUID()}`, `Secret camera ${crypto.randomUUID()}`];
    const cameras = this.withCameras ? await this.cameras(owner, secret, cameraNames) : undefined;

    const videoIds = main.videos?.map((video) => video.id) ?? [];
    const users = [owner, stranger, ...victims];
    this.pools.set("product", [main.id, second.id, foreign.id, secretProduct.id]);
    this.pools.set("component", [motor, rotor, foreign.components[0]!.id, secretProduct.components[0]!.id]);
    this.privateTexts = [
      ...[owner, stranger, secret, this.principals.get("unverified")!, lonelySuperuser, ...victims].map((user) => ({
        text: user.email,
        of: user.id,
      })),
      { text: secret.username, of: secret.id },
      ...(cameras
        ? [
            { text: cameraNames[0]!, of: owner.id },
            { text: cameraNames[1]!, of: owner.id },
            { text: cameraNames[2]!, of: secret.id },
          ]
        : []),
    ];
    this.pools.set("taxonomy", [taxonomy.id]);
    this.pools.set("category", [root.id, child.id]);
    this.pools.set("material", [steel.id, glass.id]);
    this.pools.set("product-type", [type.id]);

    const one = (name: string, values: unknown[]) => values.map((value) => ({ [name]: String(value) }));
    const pairs = (first: string, second: string, values: [unknown, unknown][]) =>
      values.map(([a, b]) => ({ [first]: String(a), [second]: String(b) }));
    const paths = this.paths;
    const withId = (prefix: string, pool: string) => paths.set(`${prefix}/{id}`, one("id", this.pool(pool)));
    withId("/v1/products", "product");
    withId("/v1/components", "component");
    withId("/v1/taxonomies", "taxonomy");
    withId("/v1/admin/taxonomies", "taxonomy");
    withId("/v1/categories", "category");
    withId("/v1/admin/categories", "category");
    withId("/v1/materials", "material");
    withId("/v1/admin/materials", "material");
    withId("/v1/product-types", "product-type");
    withId("/v1/admin/product-types", "product-type");
    paths.set(
      "{user_id}:read",
      one(
        "user_id",
        [...users, secret].map((user) => user.id),
      ),
    );
    paths.set(
      "{user_id}:write",
      one(
        "user_id",
        victims.map((user) => user.id),
      ),
    );
    paths.set(
      "{username}",
      one(
        "username",
        users.map((user) => user.username),
      ),
    );
    paths.set("{provider}", one("provider", ["google", "github"]));
    paths.set("{namespace}", one("namespace", ["reference-data", "stats"]));
    paths.set(
      "/v1/admin/materials/{id}/categories/{category_id}",
      pairs("id", "category_id", [
        [steel.id, root.id],
        [glass.id, child.id],
      ]),
    );
    paths.set(
      "/v1/admin/product-types/{id}/categories/{category_id}",
      pairs("id", "category_id", [
        [type.id, root.id],
        [type.id, child.id],
      ]),
    );
    paths.set(
      "/v1/products/{id}/materials/{material_id}",
      pairs("id", "material_id", [
        [main.id, steel.id],
        [main.id, glass.id],
        [second.id, steel.id],
      ]),
    );
    paths.set(
      "/v1/components/{id}/materials/{material_id}",
      pairs("id", "material_id", [
        [motor, glass.id],
        [motor, steel.id],
        [rotor, glass.id],
      ]),
    );
    paths.set("/v1/products/{id}/images/{image_id}", pairs("id", "image_id", productImages));
    paths.set("/v1/components/{id}/images/{image_id}", pairs("id", "image_id", componentImages));
    paths.set("/v1/products/{id}/files/{file_id}", pairs("id", "file_id", productFiles));
    paths.set("/v1/components/{id}/files/{file_id}", pairs("id", "file_id", componentFiles));
    paths.set(
      "/v1/products/{id}/videos/{video_id}",
      pairs(
        "id",
        "video_id",
        videoIds.map((video) => [main.id, video]),
      ),
    );
    if (cameras) {
      const { online, offline } = cameras;
      this.pools.set("pairing-code", cameras.pairingCodes);
      paths.set("{camera_id}", one("camera_id", [online, offline]));
      paths.set(
        "/v1/plugins/rpi-cam/cameras/{camera_id}/hls/{path}",
        pairs("camera_id", "path", [
          [online, "index.m3u8"],
          [online, "segment0.ts"],
          [offline, "index.m3u8"],
        ]),
      );
    }
    paths.set(
      "/uploads/images/thumbnails/{width}/{key}",
      pairs(
        "width",
        "key",
        keys.thumbnails.map((key) => ["200", key]),
      ),
    );
    // The published release, and a version that does not exist.
    paths.set("{version}", one("version", [release.version, "0"]));
    paths.set(
      "/v1/releases/{version}/files/{path}",
      pairs("version", "path", [
        ...release.files.map((file): [string, string] => [release.version, file]),
        [release.version, "images/0a.jpg"],
        ["0", "records.csv"],
      ]),
    );
    paths.set("/uploads/images/{key}", one("key", keys.images));
    paths.set("/uploads/files/{key}", one("key", keys.files));
  }

  /** Cameras (with the camera plugin on): the owner's online one (a test device answers) and offline one, the secret user's, and pairing codes to claim. */
  private async cameras(owner: Principal, secret: Principal, names: string[]) {
    const online = await pairCamera(owner.accessToken, names[0]);
    const offline = await pairCamera(owner.accessToken, names[1]);
    await pairCamera(secret.accessToken, names[2]);
    this.tunnel = await openTunnel(online, (request) => this.deviceAnswer(request, owner));
    const pairingCodes = [];
    for (let i = 0; i < 4; i++) pairingCodes.push((await registeredPairing()).code);
    return { online: online.id, offline: offline.id, pairingCodes };
  }

  /** A capture, as a camera makes one: it uploads a photo to the record (a base product or a component) as its owner. */
  private async capture(owner: Principal, body: { product_id: number; description: string }): Promise<DeviceAnswer> {
    const photo = { bytes: smallJpeg(), name: "capture.jpg", type: "image/jpeg" };
    for (const kind of ["products", "components"]) {
      const response = await upload(
        `/v1/${kind}/${body.product_id}/images`,
        owner.accessToken,
        photo,
        body.description ? { description: body.description } : {},
      );
      if (response.status === 201)
        return { status: 200, data: { status: "uploaded", image_id: ((await response.json()) as { id: string }).id } };
    }
    return { status: 404, data: { detail: "No such record" } };
  }

  /** Requests release 1.0.0 as the superuser and waits until the real queue has published it; its version and file paths. */
  private async publishedRelease(asAdmin: (method: string, path: string, body?: unknown) => Promise<Response>) {
    const version = "1.0.0";
    await json(asAdmin("POST", "/v1/admin/releases", { version, title: "Fuzz release" }), 202);
    for (let tries = 0; tries < 300; tries++) {
      const release = await json<{ status: string; files: { path: string }[] }>(asAdmin("GET", `/v1/releases/${version}`), 200);
      if (release.status === "published") {
        const wanted = ["records.csv", "records.parquet", "datapackage.json"];
        const files = release.files.map((file) => file.path);
        return { version, files: [...wanted, ...files.filter((path) => path.startsWith("images/")).slice(0, 1)] };
      }
      expect(release.status, "the fuzz world's release").toBe("building");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error("the fuzz world's release was not published within 30 s");
  }

  /** The path parameter assignments for `template`: its own list, else one by its parameter. */
  assignments(template: string, method: string): Record<string, string>[] {
    const own = this.paths.get(template);
    if (own) return own;
    const params = [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
    if (params.length === 1) {
      const param = params[0]!;
      const prefix = template.slice(0, template.indexOf(`{${param}}`) - 1);
      const byPrefix = param === "id" ? this.paths.get(`${prefix}/{id}`) : undefined;
      const byName =
        param === "user_id" ? this.paths.get(`{user_id}:${method === "get" ? "read" : "write"}`) : this.paths.get(`{${param}}`);
      const found = byPrefix ?? byName;
      if (found) return found;
    }
    throw new Error(`the fuzz world has no path values for ${template}`);
  }

  /** The test device: answers the relay's commands as a camera would. */
  private deviceAnswer(request: RequestFrame, owner: Principal) {
    switch (request.path) {
      case "/system/telemetry":
        return { status: 200, data: { cpu_temperature_c: 51.2, cpu_percent: 12.5 } };
      case "/system/local-access":
        return { status: 200, data: { api_key: "local-key", local_urls: ["http://192.168.1.20:8018"] } };
      case "/captures":
        return this.capture(owner, request.body as { product_id: number; description: string });
      default:
        if (request.path.startsWith("/preview/hls/")) {
          // As text, not as a binary frame: in the test runtime a binary frame sometimes reaches the
          // relay before the response frame it belongs to (a few in a hundred), and the request
          // then waits for the relay's time-out (seen in the fuzz runs of issue 21).
          return { status: 200, contentType: "application/vnd.apple.mpegurl", data: "#EXTM3U\n" };
        }
        return { status: 200, data: { ok: true } };
    }
  }

  /** The private texts of others that an answer to `as` (signed in as `principal`, if anyone) must not hold. */
  hiddenFrom(as: PrincipalName, principal: Principal | undefined): string[] {
    if (as === "admin") return [];
    return this.privateTexts.filter(({ of }) => of !== principal?.id).map(({ text }) => text);
  }

  /** A fresh verified account (with TOTP when asked), for one request that may end its session. */
  async scratch(withTotp: boolean): Promise<Principal> {
    const user = principalOf(await verifiedUser("fzscratch"));
    if (!withTotp) return user;
    const enrolment = await enrolTotp(user.accessToken, user.password);
    return {
      ...user,
      accessToken: enrolment.tokens.access_token,
      refreshToken: enrolment.tokens.refresh_token,
      authenticator: enrolment.authenticator,
    };
  }

  /** What a `Ref` stands for when sent by `principal` to a path whose parameters are `params`. */
  resolve(ref: Ref, principal: Principal | undefined, params: Record<string, string>): unknown {
    switch (ref.kind) {
      case "pool": {
        const values = this.pool(ref.pool);
        return values[ref.index % values.length];
      }
      case "password":
        return principal?.password ?? "not-a-password-of-anyone";
      case "refresh-token":
        return principal?.refreshToken ?? "not-a-refresh-token";
      case "totp":
        try {
          return principal?.authenticator?.next() ?? "123456";
        } catch {
          // Three codes per 30 s: past them, a code the service must refuse.
          return "000000";
        }
      case "version":
        return this.versionOf(params.id);
    }
  }

  private versionCache = new Map<string, string>();

  private versionOf(id: string | undefined): string {
    return this.versionCache.get(id ?? "") ?? '"1"';
  }

  /** Reads the current versions of the product rows (ETag `If-Match` values), before a PATCH. */
  async refreshVersion(id: string | undefined): Promise<void> {
    if (!id || !/^\d{1,15}$/.test(id)) return;
    const row = await env.DB.prepare("SELECT version FROM products WHERE id = ?").bind(Number(id)).first<{ version: number }>();
    if (row) this.versionCache.set(id, `"${row.version}"`);
  }

  close(): void {
    this.tunnel?.socket.close(1000, "fuzz done");
  }
}
