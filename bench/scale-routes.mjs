// The read routes `npm run bench:scale` measures (bench/README.md, "Scale"), each as a function from
// the request's number to its URL. Every request is a cache miss: a paged route varies the way its
// page number is written (`page=1`, `page=01`, `page=001`, ...: the same page, a different URL, so
// neither the read cache nor the KV cache has it); a record route takes another record each time;
// the few routes with nothing to vary are measured right after their cache was made stale (`stale`).

/** The same page number written with `i` leading zeros: a distinct URL for the same page. */
const page = (i, n = 1) => `page=${"0".repeat(i)}${n}`;

const CATALOGUE = "catalogue";
const STATS = "stats";
const REFERENCE = "reference-data";

/**
 * The routes, given what `scaleFixture` found in the database: `name`, `url(i)`, `size` (items per
 * page, for the rows-read bound of issue 30; null where the route has no page), `stale` (which
 * cache to make stale before each request, if the URL alone does not miss it).
 */
export function scaleRoutes(f) {
  const list = (name, query, size = 50) => ({
    name,
    group: "list",
    size,
    url: (i) => `/v1/products?${page(i)}&size=${size}${query ? `&${query}` : ""}`,
  });
  const orders = ["name", "brand", "model", "created_at", "updated_at", "product_type_name"].flatMap((field) => [
    list(`list order_by=${field}`, `order_by=${field}`),
    list(`list order_by=-${field}`, `order_by=-${field}`),
  ]);
  const enc = encodeURIComponent;
  return [
    list("list (default: -created_at)", ""),
    ...orders,
    list("list order_by=brand,-name", "order_by=brand,-name"),
    { ...list("list page 20", ""), page: 20, url: (i) => `/v1/products?${page(i, 20)}&size=50` },
    list(`list search=${f.word}`, `search=${enc(f.word)}`, 20),
    list(`list search=${f.rareWord}`, `search=${enc(f.rareWord)}`, 20),
    list(`list search=${f.word} order_by=name`, `search=${enc(f.word)}&order_by=name`, 20),
    list(`list brand[in]=${f.brands[0]}`, `brand%5Bin%5D=${enc(f.brands[0])}`),
    list(`list brand[in]=${f.brands[0]} order_by=name`, `brand%5Bin%5D=${enc(f.brands[0])}&order_by=name`),
    list(`list brand[in]=3 brands order_by=-updated_at`, `brand%5Bin%5D=${enc(f.brands.slice(0, 3).join(","))}&order_by=-updated_at`),
    list(`list product_type_name[in]=${f.type}`, `product_type_name%5Bin%5D=${enc(f.type)}`),
    list(`list product_type_name[in]=${f.type} order_by=model`, `product_type_name%5Bin%5D=${enc(f.type)}&order_by=model`),
    list(`list name[ilike]=${f.nameIlike}`, `name%5Bilike%5D=${enc(f.nameIlike)}`),
    list(`list name[ilike]=${f.rareIlike}`, `name%5Bilike%5D=${enc(f.rareIlike)}`),
    list(`list name[ilike]=${f.commonIlike}`, `name%5Bilike%5D=${enc(f.commonIlike)}`),
    list(`list model[ilike]=${f.modelIlike} order_by=brand`, `model%5Bilike%5D=${enc(f.modelIlike)}&order_by=brand`),
    list("list weight_g[ge]=1000", "weight_g%5Bge%5D=1000"),
    list("list weight_g[ge]=100&[le]=200 order_by=-name", "weight_g%5Bge%5D=100&weight_g%5Ble%5D=200&order_by=-name"),
    list("list created_at[ge] (last 30 days)", `created_at%5Bge%5D=${enc(f.createdSince)}`),
    list("list updated_at[le] order_by=updated_at", `updated_at%5Ble%5D=${enc(f.updatedUntil)}&order_by=updated_at`),
    list(
      "list brand + type + weight order_by=name",
      `brand%5Bin%5D=${enc(f.brands[0])}&product_type_name%5Bin%5D=${enc(f.type)}&weight_g%5Bge%5D=1&order_by=name`,
    ),
    {
      name: "user's products",
      group: "list",
      size: 50,
      url: (i) => `/v1/users/${f.demoUserId}/products?${page(i)}&size=50`,
    },
    {
      name: "facets brand,type,model",
      size: null,
      stale: CATALOGUE,
      url: () => "/v1/products/facets?fields=brand&fields=product_type_name&fields=model",
    },
    {
      name: `facets brand,type search=${f.word}`,
      size: null,
      stale: CATALOGUE,
      url: () => `/v1/products/facets?fields=brand&fields=product_type_name&search=${enc(f.word)}`,
    },
    {
      name: `facets brand weight_g[ge]=1000`,
      size: null,
      stale: CATALOGUE,
      url: () => "/v1/products/facets?fields=brand&weight_g%5Bge%5D=1000",
    },
    {
      name: "suggestions brands search=<letter>",
      size: 20,
      url: (i) => `/v1/products/suggestions/brands?search=${f.brandLetter}&${page(i)}&size=20`,
    },
    {
      name: "suggestions models search=<2 letters>",
      size: 20,
      url: (i) => `/v1/products/suggestions/models?search=${enc(f.modelPrefix)}&${page(i)}&size=20`,
    },
    { name: "suggestions models (no search)", size: 20, url: (i) => `/v1/products/suggestions/models?${page(i)}&size=20` },
    { name: "product detail", size: null, url: (i) => `/v1/products/${f.productIds[i % f.productIds.length]}` },
    { name: "direct components", size: 50, url: (i) => `/v1/products/${f.productIds[i % f.productIds.length]}/components?size=50` },
    {
      name: "component tree depth 3",
      size: null,
      url: (i) => `/v1/products/${f.productIds[i % f.productIds.length]}/components/tree?recursion_depth=3`,
    },
    { name: "images of a product", size: 50, url: (i) => `/v1/products/${f.productIds[i % f.productIds.length]}/images` },
    { name: "category tree", size: 50, stale: REFERENCE, url: (i) => `/v1/categories/tree?recursion_depth=3&${page(i)}` },
    { name: "stats totals", size: null, stale: STATS, url: () => "/v1/stats/totals" },
    { name: "stats series (month)", size: null, stale: STATS, url: () => "/v1/stats/series?granularity=month" },
    { name: "stats series (day, 1 year)", size: null, stale: STATS, url: () => `/v1/stats/series?granularity=day&start=${f.yearAgo}` },
    { name: "stats categories", size: null, stale: STATS, url: () => "/v1/stats/categories?scope=all" },
  ];
}

/** What the routes need from the database: ids, a frequent and a rare word, values of the demo data. */
export async function scaleFixture(db, samples) {
  const one = async (query, ...params) =>
    (await db
      .prepare(query)
      .bind(...params)
      .first()) ?? null;
  const demo = await one("SELECT id FROM users WHERE username = 'demo_contributor'");
  if (!demo) throw new Error("no demo_contributor account: the database was not seeded with the demo generator");
  const { lo, hi } = await one("SELECT min(id) AS lo, max(id) AS hi FROM products WHERE parent_id IS NULL");
  const productIds = [];
  // Spread over the id range (a fixed stride, so every run reads the same records).
  for (let k = 0; k < samples; k++) {
    const at = lo + Math.floor(((hi - lo) * (k + 0.5)) / samples);
    const row = await one("SELECT id FROM products WHERE id >= ? AND parent_id IS NULL ORDER BY id LIMIT 1", at);
    if (row) productIds.push(row.id);
  }
  const brands = (
    await db.prepare("SELECT DISTINCT brand FROM products WHERE parent_id IS NULL AND brand IS NOT NULL ORDER BY brand LIMIT 5").all()
  ).results.map((row) => row.brand);
  const { t: newest } = await one("SELECT max(created_at) AS t FROM products WHERE parent_id IS NULL");
  const iso = (seconds) => new Date(seconds * 1000).toISOString().replace(".000Z", "Z");
  return {
    demoUserId: demo.id,
    productIds,
    brands,
    type: "Kettle",
    word: "kettle",
    // In one product type's descriptions only ("Steam iron ... taken apart"): about 1 in 16.
    rareWord: "iron",
    nameIlike: "pro",
    rareIlike: "zq",
    // Two letters in about half the names.
    commonIlike: "er",
    modelIlike: "kt-1",
    brandLetter: "k",
    modelPrefix: "lt",
    createdSince: iso(newest - 30 * 86_400),
    updatedUntil: iso(newest - 700 * 86_400),
    yearAgo: new Date((newest - 365 * 86_400) * 1000).toISOString().slice(0, 10),
  };
}

/** Adds `perProduct` clean images to each of `productIds` in the working copy, so the media lists have rows to read. */
export async function addImages(db, productIds, perProduct) {
  const statements = [];
  for (const productId of productIds) {
    for (let k = 0; k < perProduct; k++) {
      const id = `${productId.toString(16).padStart(24, "0")}${k.toString(16).padStart(8, "0")}`;
      statements.push(
        db
          .prepare(
            `INSERT INTO images (id, product_id, storage_key, filename, content_type, size_bytes, width, height, image_metadata,
               thumbnails_ready, description, status, rejected_reason, uploaded_by, created_at, updated_at)
             SELECT ?1, ?2, ?3, 'teardown.jpg', 'image/jpeg', 1843200, 4000, 3000, '{"Make":"Bench"}', 1, 'Bench image', 'clean', NULL, NULL,
               created_at + ?4, created_at + ?4 FROM products WHERE id = ?2
             ON CONFLICT DO NOTHING`,
          )
          .bind(id, productId, `${id}${"0".repeat(32)}.jpg`, k),
      );
    }
  }
  for (let i = 0; i < statements.length; i += 500) await db.batch(statements.slice(i, i + 500));
}
