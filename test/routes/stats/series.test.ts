import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, postJson, registerUser, verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips } from "../../support/http";

// Records are created through the API, then moved into 2001 with direct SQL: nothing else in
// this file's database is that old, so the expectations below are exact.

interface Point {
  period: string;
  teardowns: number;
  parts: number;
  mass_kg: number;
  images: number;
  users_new: number;
}

interface Series {
  granularity: string;
  start: string;
  end: string;
  generated_at: string;
  series: Point[];
}

const at = (date: string, time = "10:00:00") => Math.floor(Date.parse(`${date}T${time}Z`) / 1000);
const DAY_MS = 86_400_000;
const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const zero = (period: string): Point => ({ period, teardowns: 0, parts: 0, mass_kg: 0, images: 0, users_new: 0 });

async function createProduct(token: string, body: Record<string, unknown>): Promise<number> {
  const response = await postJson("/v1/products", body, bearer(token));
  expect(response.status, await response.clone().text()).toBe(201);
  return ((await response.json()) as { id: number }).id;
}

/** Moves a base product to `baseAt`, and every component below it to `componentsAt`. */
async function backdate(id: number, baseAt: number, componentsAt = baseAt): Promise<void> {
  await env.DB.batch([
    env.DB.prepare("UPDATE products SET created_at = ? WHERE id = ?").bind(baseAt, id),
    env.DB.prepare(
      `WITH RECURSIVE below(id) AS (SELECT id FROM products WHERE parent_id = ?1
         UNION ALL SELECT p.id FROM products p JOIN below b ON p.parent_id = b.id)
       UPDATE products SET created_at = ?2 WHERE id IN (SELECT id FROM below)`,
    ).bind(id, componentsAt),
  ]);
}

async function series(query: string): Promise<{ response: Response; body: Series }> {
  const response = await api(`/v1/stats/series?${query}`);
  expect(response.status, await response.clone().text()).toBe(200);
  return { response, body: (await response.json()) as Series };
}

beforeAll(async () => {
  const alice = await verifiedUser("alice");
  const token = alice.tokens.access_token;
  // 2001-03-05 is a Monday; 03-11 the Sunday that ends its ISO week.
  const grinder = await createProduct(token, {
    name: "Grinder",
    weight_g: 1450,
    components: [{ name: "Motor", amount_in_parent: 1, weight_g: 900, components: [{ name: "Brush", amount_in_parent: 2 }] }],
  });
  await backdate(grinder, at("2001-03-05"), at("2001-03-07"));
  await backdate(await createProduct(token, { name: "Lamp", weight_g: 333 }), at("2001-03-11", "23:59:59"));
  await backdate(await createProduct(token, { name: "Fan" }), at("2001-05-20"));
  const [early, late] = [await registerUser(), await registerUser()];
  await env.DB.batch([
    env.DB.prepare("UPDATE users SET created_at = ? WHERE id = ?").bind(at("2001-03-06"), early.id),
    env.DB.prepare("UPDATE users SET created_at = ? WHERE id = ?").bind(at("2001-05-21"), late.id),
    // The system account is never a new user.
    env.DB.prepare("UPDATE users SET created_at = ? WHERE is_system = 1").bind(at("2001-03-06")),
  ]);
});

describe("GET /v1/stats/series", () => {
  it("counts per day, every day of the range present and zero-filled, in one round trip", async () => {
    const { response, body } = await series("granularity=day&start=2001-03-04&end=2001-03-12");
    expect(roundTrips(response)).toBe(1);
    expect(response.headers.get("x-cache")).toBe("miss");
    expect(response.headers.get("cache-control")).toBe("public, max-age=60");
    expect(body.generated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(body).toMatchObject({ granularity: "day", start: "2001-03-04", end: "2001-03-12" });
    expect(body.series).toEqual([
      zero("2001-03-04"),
      { ...zero("2001-03-05"), teardowns: 1, mass_kg: 1.45 },
      { ...zero("2001-03-06"), users_new: 1 },
      { ...zero("2001-03-07"), parts: 2 },
      zero("2001-03-08"),
      zero("2001-03-09"),
      zero("2001-03-10"),
      { ...zero("2001-03-11"), teardowns: 1, mass_kg: 0.333 },
      zero("2001-03-12"),
    ]);
  });

  it("labels a week by the Monday that starts it, the week holding start first", async () => {
    // 2001-02-28 is a Wednesday, 2001-05-22 a Tuesday.
    const { body } = await series("granularity=week&start=2001-02-28&end=2001-05-22");
    const mondays = Array.from({ length: 13 }, (_, i) => isoDate(Date.parse("2001-02-26T00:00:00Z") + i * 7 * DAY_MS));
    expect(body.series.map((point) => point.period)).toEqual(mondays);
    expect(body.series).toEqual(
      mondays.map((monday) =>
        monday === "2001-03-05"
          ? { ...zero(monday), teardowns: 2, parts: 2, mass_kg: 1.783, users_new: 1 }
          : monday === "2001-05-14"
            ? { ...zero(monday), teardowns: 1 }
            : monday === "2001-05-21"
              ? { ...zero(monday), users_new: 1 }
              : zero(monday),
      ),
    );
  });

  it("counts per month and per year", async () => {
    const months = await series("granularity=month&start=2001-01-15&end=2001-06-10");
    expect(months.body.series).toEqual([
      zero("2001-01"),
      zero("2001-02"),
      { ...zero("2001-03"), teardowns: 2, parts: 2, mass_kg: 1.783, users_new: 1 },
      zero("2001-04"),
      { ...zero("2001-05"), teardowns: 1, users_new: 1 },
      zero("2001-06"),
    ]);
    const years = await series("granularity=year&start=1999-06-01&end=2002-01-01");
    expect(years.body.series).toEqual([
      zero("1999"),
      zero("2000"),
      { ...zero("2001"), teardowns: 3, parts: 2, mass_kg: 1.783, users_new: 2 },
      zero("2002"),
    ]);
  });

  it("counts only the days inside the range in the first and last periods, both ends included", async () => {
    const { body } = await series("granularity=month&start=2001-03-06&end=2001-05-20");
    expect(body.series).toEqual([
      // The grinder (03-05) is before the range, its components (03-07) and the lamp (03-11 23:59:59) inside.
      { ...zero("2001-03"), teardowns: 1, parts: 2, mass_kg: 0.333, users_new: 1 },
      zero("2001-04"),
      // The fan (05-20) is on the last day; the account of 05-21 is after it.
      { ...zero("2001-05"), teardowns: 1 },
    ]);
    const one = await series("granularity=year&start=2001-03-11&end=2001-03-11");
    expect(one.body.series).toEqual([{ ...zero("2001"), teardowns: 1, mass_kg: 0.333 }]);
  });

  it("defaults to months, ending today (UTC) and starting a year before", async () => {
    const now = new Date();
    const today = isoDate(now.getTime());
    const { body } = await series("");
    now.setUTCFullYear(now.getUTCFullYear() - 1);
    expect(body).toMatchObject({ granularity: "month", end: today, start: isoDate(now.getTime()) });
    expect(body.series).toHaveLength(13);
    expect(body.series[0]!.period).toBe(body.start.slice(0, 7));
    // This file's accounts were created today.
    expect(body.series.at(-1)).toMatchObject({ period: today.slice(0, 7), users_new: expect.any(Number) });
    expect(body.series.at(-1)!.users_new).toBeGreaterThanOrEqual(1);
  });

  it("defaults start to 30 days before end for days, 90 for weeks, a year for years", async () => {
    const days = await series("granularity=day&end=2001-03-31");
    expect(days.body).toMatchObject({ start: "2001-03-01", end: "2001-03-31" });
    expect(days.body.series).toHaveLength(31);
    expect(days.body.series[4]).toEqual({ ...zero("2001-03-05"), teardowns: 1, mass_kg: 1.45 });

    // 90 days before Tuesday 2001-05-22 is Wednesday 2001-02-21: weeks from Monday 02-19 to Monday 05-21.
    const weeks = await series("granularity=week&end=2001-05-22");
    expect(weeks.body).toMatchObject({ start: "2001-02-21", end: "2001-05-22" });
    expect(weeks.body.series).toHaveLength(14);
    expect(weeks.body.series[0]!.period).toBe("2001-02-19");
    expect(weeks.body.series.at(-1)!.period).toBe("2001-05-21");

    const years = await series("granularity=year&end=2002-02-01");
    expect(years.body).toMatchObject({ start: "2001-02-01", end: "2002-02-01" });
    expect(years.body.series).toEqual([{ ...zero("2001"), teardowns: 3, parts: 2, mass_kg: 1.783, users_new: 2 }, zero("2002")]);
  });

  it("answers a repeated request from the cache, without touching D1", async () => {
    const query = "granularity=week&start=2001-03-01&end=2001-03-31";
    const first = await series(query);
    expect(first.response.headers.get("x-cache")).toBe("miss");
    expect(roundTrips(first.response)).toBe(1);
    // The same parameters in another order are the same answer.
    const again = await series("end=2001-03-31&start=2001-03-01&granularity=week");
    expect(again.response.headers.get("x-cache")).toBe("hit");
    expect(roundTrips(again.response)).toBe(0);
    expect(again.body).toEqual(first.body);
  });

  it("accepts up to 1,000 periods and refuses more with 422", async () => {
    const end = isoDate(Date.parse("2001-01-01T00:00:00Z") + 999 * DAY_MS);
    const { body } = await series(`granularity=day&start=2001-01-01&end=${end}`);
    expect(body.series).toHaveLength(1000);
    expect(body.series.reduce((sum, point) => sum + point.teardowns, 0)).toBe(3);

    for (const query of [
      `granularity=day&start=2001-01-01&end=${isoDate(Date.parse(`${end}T00:00:00Z`) + DAY_MS)}`,
      "granularity=week&start=1990-01-01&end=2010-01-01",
      "granularity=month&start=1970-01-01&end=2070-01-01",
      "granularity=year&start=1970-01-01&end=9999-12-31",
    ]) {
      const problem = await expectProblem(await api(`/v1/stats/series?${query}`), 422, "VALIDATION_FAILED");
      expect(problem.errors).toEqual([{ pointer: "#/query/start", detail: expect.stringMatching(/at most 1000 are allowed/) }]);
    }
  });

  it("refuses a start after the end with 422 at #/query/start", async () => {
    const problem = await expectProblem(await api("/v1/stats/series?start=2001-03-02&end=2001-03-01"), 422, "VALIDATION_FAILED");
    expect(problem.errors).toEqual([{ pointer: "#/query/start", detail: "The start (2001-03-02) is after the end (2001-03-01)." }]);
    // A start in the future is after the default end, today.
    const future = await expectProblem(await api("/v1/stats/series?granularity=day&start=2999-01-01"), 422, "VALIDATION_FAILED");
    expect(future.errors?.[0]?.pointer).toBe("#/query/start");
  });

  it("refuses malformed dates, granularities and unknown parameters with 422", async () => {
    for (const [query, pointer] of [
      ["start=2001-13-01", "#/query/start"],
      ["start=2001-02-29", "#/query/start"],
      ["end=2001-3-5", "#/query/end"],
      ["end=20010305", "#/query/end"],
      ["end=2001-03-05T00:00:00Z", "#/query/end"],
      ["start=", "#/query/start"],
      ["start=1969-12-31", "#/query/start"],
      ["granularity=quarter", "#/query/granularity"],
      ["granularity=Month", "#/query/granularity"],
      ["scope=all", "#/query/scope"],
    ] as const) {
      const problem = await expectProblem(await api(`/v1/stats/series?${query}`), 422, "VALIDATION_FAILED");
      expect(
        problem.errors?.map((error) => error.pointer),
        query,
      ).toEqual([pointer]);
    }
    // A leap day is a date.
    expect((await api("/v1/stats/series?granularity=day&start=2000-02-29&end=2000-03-01")).status).toBe(200);
  });
});
