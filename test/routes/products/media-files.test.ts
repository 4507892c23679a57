import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, me, verifiedUser } from "../../support/accounts";
import { api, expectProblem } from "../../support/http";
import { captureLogs } from "../../support/logs";
import { type MediaItem, pathOf, productWithComponent, runMediaJob, scan, setRole, upload, uploaded } from "../../support/media";

const EICAR = "X5O!P%@AP[4\\PZX54(P^)7CC)7}$" + "EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*";
const text = (value: string) => new TextEncoder().encode(value);
const csv = (value = "part,mass_g\r\nscrew,1.2\r\n") => ({ bytes: text(value), name: "masses.csv", type: "text/csv" });

let contributor: { id: number; token: string };
let lab: { id: number; token: string };

beforeAll(async () => {
  const [c, l] = [await verifiedUser("filecontrib"), await verifiedUser("filelab")];
  contributor = { id: c.id, token: c.tokens.access_token };
  lab = { id: l.id, token: l.tokens.access_token };
  await setRole(lab.id, "lab");
});

async function usage(token: string) {
  const body = (await (await me(token)).json()) as { upload_file_count: number; upload_total_bytes: number; upload_quota_files: number };
  return { files: body.upload_file_count, bytes: body.upload_total_bytes, quotaFiles: body.upload_quota_files };
}

describe("research files need the lab role", () => {
  it("a contributor is refused with 403 before the body is read; a lab user's file is stored as sent", async () => {
    const mine = await productWithComponent(contributor.token);
    await expectProblem(await upload(`/v1/products/${mine.product}/files`, contributor.token, csv()), 403, "LAB_ROLE_REQUIRED");

    const { product, component } = await productWithComponent(lab.token);
    const before = await usage(lab.token);
    expect(before.quotaFiles).toBe(20_000);
    const body = "part,mass_g\r\nscrew,1.2\r\n";
    const item = await uploaded(`/v1/components/${component}/files`, lab.token, csv(body), { description: "Masses" });
    expect(item).toMatchObject({ filename: "masses.csv", description: "Masses", status: "pending" });
    expect(item.file_url).toMatch(/\/uploads\/files\/[0-9a-f]{64}\.csv$/);
    expect(await usage(lab.token)).toMatchObject({ files: before.files + 1, bytes: before.bytes + body.length });

    await scan("files", item.id);
    const served = await api(pathOf(item.file_url!));
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(served.headers.get("content-disposition")).toBe("attachment");
    expect(await served.text()).toBe(body);
    const detail = (await (await api(`/v1/components/${component}`)).json()) as { files: MediaItem[] };
    expect(detail.files.map((f) => f.id)).toEqual([item.id]);
    // A file on the other kind's route is not found.
    await expectProblem(await api(`/v1/products/${component}/files`), 404, "NOT_FOUND");
    await expectProblem(await api(`/v1/components/${product}/files/${item.id}`), 404, "NOT_FOUND");
  });

  it("extensions, declared types and signatures must agree", async () => {
    const { product } = await productWithComponent(lab.token);
    const path = `/v1/products/${product}/files`;
    const pdf = text("%PDF-1.7\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n");
    expect((await upload(path, lab.token, { bytes: pdf, name: "report.pdf", type: "application/pdf" })).status).toBe(201);
    await expectProblem(
      await upload(path, lab.token, { bytes: text("not a pdf"), name: "report.pdf", type: "application/pdf" }),
      415,
      "MEDIA_TYPE_MISMATCH",
    );
    await expectProblem(await upload(path, lab.token, { bytes: pdf, name: "report.pdf", type: "text/plain" }), 415, "MEDIA_TYPE_MISMATCH");
    await expectProblem(
      await upload(path, lab.token, { bytes: pdf, name: "run.exe", type: "application/octet-stream" }),
      415,
      "UNSUPPORTED_MEDIA_TYPE",
    );
    const hint = await expectProblem(
      await upload(path, lab.token, { bytes: pdf, name: "a.jpg", type: "image/jpeg" }),
      415,
      "UNSUPPORTED_MEDIA_TYPE",
    );
    expect(hint.detail).toContain("/images");
    const hdf5 = new Uint8Array(64);
    hdf5.set([0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect((await upload(path, lab.token, { bytes: hdf5, name: "cube.h5", type: "application/octet-stream" })).status).toBe(201);
    const envi = text("ENVI\ndescription = {cube}\nsamples = 10\n");
    expect((await upload(path, lab.token, { bytes: envi, name: "cube.hdr", type: "text/plain" })).status).toBe(201);
    expect(
      (await upload(path, lab.token, { bytes: new Uint8Array([0, 1, 2, 3]), name: "cube.raw", type: "application/octet-stream" })).status,
    ).toBe(201);
    await expectProblem(
      await upload(path, lab.token, { bytes: new Uint8Array([0xff, 0xfe, 0, 0x41]), name: "notes.txt", type: "text/plain" }),
      415,
      "MEDIA_TYPE_MISMATCH",
    );
  });
});

describe("the malware scan", () => {
  it("rejects the EICAR test file, releases its quota, audits it, and never serves it", async () => {
    const { product } = await productWithComponent(lab.token);
    const before = await usage(lab.token);
    const item = await uploaded(`/v1/products/${product}/files`, lab.token, { bytes: text(EICAR), name: "eicar.txt", type: "text/plain" });
    expect(await usage(lab.token)).toMatchObject({ files: before.files + 1 });
    const logs = captureLogs();
    try {
      await scan("files", item.id);
    } finally {
      logs.restore();
    }
    expect(logs.entries().filter((line) => line.msg === "audit")).toContainEqual(
      expect.objectContaining({ event: "media.scan.infected", threat: "EICAR-Test-File" }),
    );
    expect(await usage(lab.token)).toEqual(before);
    // Its owner sees what became of it; nobody else sees it, and nothing is served.
    const own = await api(`/v1/products/${product}/files/${item.id}`, { headers: bearer(lab.token) });
    expect(await own.json()).toMatchObject({ id: item.id, status: "rejected", rejected_reason: "malware" });
    await expectProblem(await api(`/v1/products/${product}/files/${item.id}`), 404, "NOT_FOUND");
    await expectProblem(await api(pathOf(item.file_url!)), 404, "NOT_FOUND");
    expect(await env.UPLOADS.get(`quarantine/files/${item.id}`)).toBeNull();
    expect(await env.UPLOADS.get(`files/${pathOf(item.file_url!).split("/").pop()}`)).toBeNull();
  });

  it("a second delivery of the same scan message changes nothing", async () => {
    const { product } = await productWithComponent(lab.token);
    const item = await uploaded(`/v1/products/${product}/files`, lab.token, csv("a,b\r\n1,2\r\n"));
    await scan("files", item.id);
    const after = await usage(lab.token);
    await scan("files", item.id);
    expect(await usage(lab.token)).toEqual(after);
    expect((await api(pathOf(item.file_url!))).status).toBe(200);
  });
});

describe("deleting records releases their media", () => {
  it("deleting a product frees the quota of every file and image below it, and the purge removes the objects", async () => {
    const { product, component } = await productWithComponent(lab.token);
    const before = await usage(lab.token);
    const a = await uploaded(`/v1/products/${product}/files`, lab.token, csv("x\r\n1\r\n"));
    const b = await uploaded(`/v1/components/${component}/files`, lab.token, csv("x\r\n2\r\n"));
    await scan("files", a.id);
    await scan("files", b.id);
    expect((await api(`/v1/products/${product}`, { method: "DELETE", headers: bearer(lab.token) })).status).toBe(204);
    expect(await usage(lab.token)).toEqual(before);
    const keys = [a, b].map((item) => pathOf(item.file_url!).split("/").pop()!);
    expect(await runMediaJob({ type: "media.purge", kind: "files", keys })).toEqual({ acked: true, retried: false });
    for (const item of [a, b]) await expectProblem(await api(pathOf(item.file_url!)), 404, "NOT_FOUND");
  });

  it("an object shared by two records stays until the last one goes", async () => {
    const one = await productWithComponent(lab.token);
    const two = await productWithComponent(lab.token);
    const first = await uploaded(`/v1/products/${one.product}/files`, lab.token, csv("same\r\n"));
    const second = await uploaded(`/v1/products/${two.product}/files`, lab.token, csv("same\r\n"));
    expect(first.file_url).toBe(second.file_url);
    await scan("files", first.id);
    await scan("files", second.id);
    expect((await api(`/v1/products/${one.product}/files/${first.id}`, { method: "DELETE", headers: bearer(lab.token) })).status).toBe(204);
    expect((await api(pathOf(second.file_url!))).status).toBe(200);
    expect((await api(`/v1/products/${two.product}/files/${second.id}`, { method: "DELETE", headers: bearer(lab.token) })).status).toBe(
      204,
    );
    await expectProblem(await api(pathOf(second.file_url!)), 404, "NOT_FOUND");
  });
});
