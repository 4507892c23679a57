// The starter reference data of a local install: a product taxonomy, a materials taxonomy with
// densities and critical-raw-material flags, and product types linked to their categories. Units
// are not here: migration 0001 seeds them as part of the data model.
//
// Plain data plus `starterStatements()`, which turns it into idempotent SQL: every insert skips a
// row that is already there (ON CONFLICT DO NOTHING on the tables' unique keys: taxonomy name and
// version, category external id within its taxonomy, material and product-type names, link
// primary keys), and parents, taxonomies, materials and categories are found by those keys in
// subqueries, never by autoincrement ids. Running the statements twice changes nothing; a row an
// administrator edited keeps its edits (the seed never updates). No imports: the Workers tests
// import this module too.

export const PRODUCT_TAXONOMY = {
  name: "relab products",
  version: "1",
  description: "Common electronic and household products, grouped as shops and WEEE collection schemes group them.",
  domains: ["products"],
  source:
    "relab starter data (scripts/seed/starter-data.mjs); groupings after common retail categories and the EU WEEE Directive (2012/19/EU) product categories.",
};

export const MATERIAL_TAXONOMY = {
  name: "relab materials",
  version: "1",
  description: "Materials found when taking apart electronic and household products.",
  domains: ["materials"],
  source:
    "relab starter data (scripts/seed/starter-data.mjs); densities from engineering handbooks and the Wikipedia pages of each material; CRM flags per Regulation (EU) 2024/1252, Annex II.",
};

/**
 * A category: `id` is its stable external id, `parent` the external id of its supercategory
 * (absent for a top-level category). Parents come before their children.
 */
export const PRODUCT_CATEGORIES = [
  { id: "prod.electronics", name: "Electronics", description: "Consumer electronics and IT equipment." },
  { id: "prod.computing", parent: "prod.electronics", name: "Computing" },
  { id: "prod.computing.laptops", parent: "prod.computing", name: "Laptops" },
  { id: "prod.computing.desktops", parent: "prod.computing", name: "Desktop computers" },
  { id: "prod.computing.monitors", parent: "prod.computing", name: "Monitors" },
  { id: "prod.computing.peripherals", parent: "prod.computing", name: "Keyboards and mice" },
  { id: "prod.computing.printers", parent: "prod.computing", name: "Printers" },
  { id: "prod.mobile", parent: "prod.electronics", name: "Mobile devices" },
  { id: "prod.mobile.phones", parent: "prod.mobile", name: "Smartphones" },
  { id: "prod.mobile.tablets", parent: "prod.mobile", name: "Tablets" },
  { id: "prod.mobile.wearables", parent: "prod.mobile", name: "Smartwatches and wearables" },
  { id: "prod.av", parent: "prod.electronics", name: "Audio and video" },
  { id: "prod.av.televisions", parent: "prod.av", name: "Televisions" },
  { id: "prod.av.headphones", parent: "prod.av", name: "Headphones" },
  { id: "prod.av.speakers", parent: "prod.av", name: "Speakers" },
  { id: "prod.av.cameras", parent: "prod.av", name: "Cameras" },
  { id: "prod.accessories", parent: "prod.electronics", name: "Accessories" },
  { id: "prod.accessories.chargers", parent: "prod.accessories", name: "Chargers and power adapters" },
  { id: "prod.accessories.powerbanks", parent: "prod.accessories", name: "Power banks" },
  { id: "prod.accessories.cables", parent: "prod.accessories", name: "Cables" },

  { id: "prod.household", name: "Household appliances", description: "Large and small electrical appliances for the home." },
  { id: "prod.kitchen", parent: "prod.household", name: "Kitchen appliances" },
  { id: "prod.kitchen.kettles", parent: "prod.kitchen", name: "Kettles" },
  { id: "prod.kitchen.toasters", parent: "prod.kitchen", name: "Toasters" },
  { id: "prod.kitchen.coffee", parent: "prod.kitchen", name: "Coffee machines" },
  { id: "prod.kitchen.blenders", parent: "prod.kitchen", name: "Blenders and food processors" },
  { id: "prod.kitchen.microwaves", parent: "prod.kitchen", name: "Microwave ovens" },
  { id: "prod.cleaning", parent: "prod.household", name: "Cleaning" },
  { id: "prod.cleaning.vacuums", parent: "prod.cleaning", name: "Vacuum cleaners" },
  { id: "prod.cleaning.robot_vacuums", parent: "prod.cleaning", name: "Robot vacuum cleaners" },
  { id: "prod.laundry", parent: "prod.household", name: "Laundry and ironing" },
  { id: "prod.laundry.irons", parent: "prod.laundry", name: "Irons" },
  { id: "prod.laundry.washing_machines", parent: "prod.laundry", name: "Washing machines" },
  { id: "prod.personal_care", parent: "prod.household", name: "Personal care" },
  { id: "prod.personal_care.hair_dryers", parent: "prod.personal_care", name: "Hair dryers" },
  { id: "prod.personal_care.shavers", parent: "prod.personal_care", name: "Electric shavers" },
  { id: "prod.personal_care.toothbrushes", parent: "prod.personal_care", name: "Electric toothbrushes" },
  { id: "prod.climate", parent: "prod.household", name: "Heating and cooling" },
  { id: "prod.climate.fans", parent: "prod.climate", name: "Fans" },
  { id: "prod.climate.heaters", parent: "prod.climate", name: "Space heaters" },

  { id: "prod.tools", name: "Tools and garden", description: "Electric tools for the workshop and the garden." },
  { id: "prod.tools.power", parent: "prod.tools", name: "Power tools" },
  { id: "prod.tools.power.drills", parent: "prod.tools.power", name: "Drills and drivers" },
  { id: "prod.tools.power.saws", parent: "prod.tools.power", name: "Saws" },
  { id: "prod.tools.garden", parent: "prod.tools", name: "Garden tools" },
  { id: "prod.tools.garden.trimmers", parent: "prod.tools.garden", name: "Hedge and grass trimmers" },

  { id: "prod.lighting", name: "Lighting", description: "Lamps, luminaires and light sources." },
  { id: "prod.lighting.lamps", parent: "prod.lighting", name: "Lamps and luminaires" },
  { id: "prod.lighting.bulbs", parent: "prod.lighting", name: "Light bulbs" },
];

export const MATERIAL_CATEGORIES = [
  { id: "mat.metals", name: "Metals" },
  { id: "mat.metals.ferrous", parent: "mat.metals", name: "Ferrous metals" },
  { id: "mat.metals.nonferrous", parent: "mat.metals", name: "Non-ferrous metals" },
  { id: "mat.metals.precious", parent: "mat.metals", name: "Precious metals" },
  { id: "mat.plastics", name: "Plastics" },
  { id: "mat.plastics.thermoplastics", parent: "mat.plastics", name: "Thermoplastics" },
  { id: "mat.plastics.thermosets", parent: "mat.plastics", name: "Thermosets" },
  { id: "mat.glass", name: "Glass" },
  { id: "mat.ceramics", name: "Ceramics and minerals" },
  { id: "mat.elastomers", name: "Rubber and elastomers" },
  { id: "mat.wood_paper", name: "Wood and paper" },
  { id: "mat.textiles", name: "Textiles" },
  {
    id: "mat.electronics",
    name: "Electronics materials",
    description: "Laminates, solders and other materials made for electronic assemblies.",
  },
  {
    id: "mat.crm",
    name: "Critical raw materials",
    description: "Materials on the EU list of critical raw materials (Regulation (EU) 2024/1252, Annex II).",
  },
  { id: "mat.crm.battery", parent: "mat.crm", name: "Battery materials" },
  { id: "mat.crm.magnets", parent: "mat.crm", name: "Rare-earth magnets" },
  { id: "mat.crm.semiconductors", parent: "mat.crm", name: "Semiconductor and capacitor materials" },
];

// Densities in kg/m3, typical room-temperature values from engineering handbooks (Engineering
// ToolBox, MatWeb typical-property pages, polymer suppliers' datasheets) and the Wikipedia page of
// each material; alloys, polymers and composites vary by grade, so a common grade's value is used
// (noted where it matters).
//
// is_crm: the material is, or is named for, one of the 34 critical raw materials of the EU list
// assessed in 2023 and enacted as Annex II of the Critical Raw Materials Act (Regulation (EU)
// 2024/1252): antimony, arsenic, bauxite/alumina/aluminium, baryte, beryllium, bismuth, boron,
// cobalt, coking coal, copper, feldspar, fluorspar, gallium, germanium, hafnium, helium, heavy and
// light rare earth elements, lithium, magnesium, manganese, natural graphite, nickel (battery
// grade), niobium, phosphate rock, phosphorus, platinum group metals, scandium, silicon metal,
// strontium, tantalum, titanium metal, tungsten, vanadium. Tantalum IS on that list (it has been
// on every list since 2020). Indium and natural rubber were on the 2020 list but not on the 2023
// one, so they are false here; nickel is only listed at battery grade, so nickel metal is false.
// Alloys and composites that merely contain a listed element (brass, stainless steel, solder,
// FR-4) are not flagged: the flag describes the material entry itself.
export const MATERIALS = [
  // Ferrous
  { name: "Steel", category: "mat.metals.ferrous", density: 7850, description: "Carbon steel, e.g. cold-rolled sheet and screws." },
  { name: "Stainless steel", category: "mat.metals.ferrous", density: 8000, description: "Austenitic stainless steel (AISI 304)." },
  { name: "Cast iron", category: "mat.metals.ferrous", density: 7200, description: "Grey cast iron." },
  // Non-ferrous
  {
    name: "Aluminium",
    category: "mat.metals.nonferrous",
    density: 2700,
    crm: true,
    description: "Wrought aluminium and its alloys (listed as bauxite/alumina/aluminium).",
  },
  { name: "Copper", category: "mat.metals.nonferrous", density: 8960, crm: true, description: "Copper wire, windings and foil." },
  {
    name: "Brass",
    category: "mat.metals.nonferrous",
    density: 8500,
    description: "Copper-zinc alloy (CuZn37 about 8440, free-cutting grades up to 8500).",
  },
  { name: "Zinc", category: "mat.metals.nonferrous", density: 7140 },
  { name: "Tin", category: "mat.metals.nonferrous", density: 7265, description: "White (beta) tin." },
  { name: "Lead", category: "mat.metals.nonferrous", density: 11340 },
  { name: "Nichrome", category: "mat.metals.nonferrous", density: 8400, description: "Nickel-chromium resistance wire (NiCr 80/20)." },
  {
    name: "Nickel",
    category: "mat.metals.nonferrous",
    density: 8908,
    description: "Nickel metal and plating (only battery-grade nickel is a critical raw material).",
  },
  { name: "Magnesium", category: "mat.metals.nonferrous", density: 1738, crm: true },
  { name: "Titanium", category: "mat.metals.nonferrous", density: 4506, crm: true },
  {
    name: "Tungsten",
    category: "mat.metals.nonferrous",
    density: 19250,
    crm: true,
    description: "Tungsten, e.g. vibration-motor weights and filaments.",
  },
  // Precious
  { name: "Gold", category: "mat.metals.precious", density: 19300, description: "Contact and bond-wire plating." },
  { name: "Silver", category: "mat.metals.precious", density: 10490 },
  {
    name: "Palladium",
    category: "mat.metals.precious",
    density: 12023,
    crm: true,
    description: "A platinum group metal; in multilayer ceramic capacitors and plating.",
  },
  { name: "Platinum", category: "mat.metals.precious", density: 21450, crm: true },
  // Thermoplastics (unfilled grades)
  { name: "ABS", category: "mat.plastics.thermoplastics", density: 1050, description: "Acrylonitrile butadiene styrene." },
  { name: "PP", category: "mat.plastics.thermoplastics", density: 905, description: "Polypropylene." },
  { name: "PE-HD", category: "mat.plastics.thermoplastics", density: 950, description: "High-density polyethylene." },
  { name: "PE-LD", category: "mat.plastics.thermoplastics", density: 920, description: "Low-density polyethylene." },
  { name: "PC", category: "mat.plastics.thermoplastics", density: 1200, description: "Polycarbonate." },
  { name: "PC/ABS", category: "mat.plastics.thermoplastics", density: 1150, description: "Polycarbonate/ABS blend." },
  {
    name: "PVC",
    category: "mat.plastics.thermoplastics",
    density: 1380,
    description: "Polyvinyl chloride; rigid about 1380, flexible cable sheath 1200 to 1400.",
  },
  { name: "PA6", category: "mat.plastics.thermoplastics", density: 1140, description: "Polyamide 6 (nylon 6)." },
  {
    name: "PET",
    category: "mat.plastics.thermoplastics",
    density: 1380,
    description: "Polyethylene terephthalate (amorphous 1370, crystalline up to 1455).",
  },
  { name: "PS", category: "mat.plastics.thermoplastics", density: 1050, description: "Polystyrene." },
  { name: "PMMA", category: "mat.plastics.thermoplastics", density: 1180, description: "Polymethyl methacrylate (acrylic glass)." },
  { name: "POM", category: "mat.plastics.thermoplastics", density: 1410, description: "Polyoxymethylene (acetal)." },
  // Thermosets
  { name: "Epoxy resin", category: "mat.plastics.thermosets", density: 1200, description: "Cured, unfilled epoxy (1100 to 1400)." },
  {
    name: "Polyurethane foam",
    category: "mat.plastics.thermosets",
    density: 40,
    description: "Flexible foam, apparent density (20 to 80).",
  },
  { name: "Phenolic resin", category: "mat.plastics.thermosets", density: 1300, description: "Phenol-formaldehyde (Bakelite), unfilled." },
  // Glass
  { name: "Soda-lime glass", category: "mat.glass", density: 2500 },
  { name: "Borosilicate glass", category: "mat.glass", density: 2230 },
  {
    name: "Aluminosilicate glass",
    category: "mat.glass",
    density: 2400,
    description: "Chemically strengthened cover glass of phones and tablets.",
  },
  // Ceramics and minerals
  { name: "Alumina", category: "mat.ceramics", density: 3950, description: "Aluminium oxide ceramic (insulators, substrates)." },
  { name: "Porcelain", category: "mat.ceramics", density: 2400 },
  { name: "Ferrite", category: "mat.ceramics", density: 4800, description: "Manganese-zinc ferrite of transformer and choke cores." },
  {
    name: "Mica",
    category: "mat.ceramics",
    density: 2820,
    description: "Muscovite mica sheet, the carrier of heating wires in toasters and hair dryers (2760 to 2880).",
  },
  { name: "Concrete", category: "mat.ceramics", density: 2400, description: "Counterweights of washing machines." },
  { name: "Magnesium oxide", category: "mat.ceramics", density: 3580, description: "Insulating filler of sheathed heating elements." },
  // Elastomers
  {
    name: "Natural rubber",
    category: "mat.elastomers",
    density: 920,
    description: "Not on the 2023 EU critical raw materials list (it was on the 2020 one).",
  },
  { name: "Silicone rubber", category: "mat.elastomers", density: 1200, description: "Filled silicone rubber (1100 to 1500)." },
  {
    name: "EPDM",
    category: "mat.elastomers",
    density: 1150,
    description: "Compounded ethylene propylene diene rubber (the raw polymer is about 860).",
  },
  { name: "TPE", category: "mat.elastomers", density: 1000, description: "Thermoplastic elastomer (styrenic TPE, 890 to 1200)." },
  // Wood and paper
  { name: "Cardboard", category: "mat.wood_paper", density: 690 },
  { name: "Paper", category: "mat.wood_paper", density: 800 },
  { name: "MDF", category: "mat.wood_paper", density: 750, description: "Medium-density fibreboard." },
  { name: "Beech wood", category: "mat.wood_paper", density: 720 },
  // Textiles
  { name: "Cotton", category: "mat.textiles", density: 1540, description: "Cotton fibre." },
  { name: "Polyester fibre", category: "mat.textiles", density: 1380 },
  // Electronics materials
  { name: "FR-4", category: "mat.electronics", density: 1850, description: "Glass-fibre epoxy laminate of printed circuit boards." },
  { name: "Solder (SAC305)", category: "mat.electronics", density: 7370, description: "Lead-free tin-silver-copper solder." },
  {
    name: "Indium tin oxide",
    category: "mat.electronics",
    density: 7140,
    description: "Transparent electrode of displays (indium is not on the 2023 EU list).",
  },
  // Critical raw materials
  { name: "Cobalt", category: "mat.crm", density: 8900, crm: true },
  { name: "Silicon", category: "mat.crm.semiconductors", density: 2329, crm: true, description: "Silicon metal, e.g. semiconductor dies." },
  { name: "Gallium nitride", category: "mat.crm.semiconductors", density: 6150, crm: true, description: "GaN power transistors and LEDs." },
  {
    name: "Gallium arsenide",
    category: "mat.crm.semiconductors",
    density: 5320,
    crm: true,
    description: "Listed twice: gallium and arsenic.",
  },
  { name: "Tantalum", category: "mat.crm.semiconductors", density: 16690, crm: true, description: "Tantalum capacitor anodes." },
  {
    name: "Lithium cobalt oxide",
    category: "mat.crm.battery",
    density: 5050,
    crm: true,
    description: "LCO cathode material of phone and laptop cells.",
  },
  {
    name: "Lithium nickel manganese cobalt oxide",
    category: "mat.crm.battery",
    density: 4700,
    crm: true,
    description: "NMC cathode material.",
  },
  { name: "Lithium iron phosphate", category: "mat.crm.battery", density: 3600, crm: true, description: "LFP cathode material." },
  { name: "Natural graphite", category: "mat.crm.battery", density: 2200, crm: true, description: "Anode material (2090 to 2230)." },
  {
    name: "Neodymium magnet",
    category: "mat.crm.magnets",
    density: 7500,
    crm: true,
    description: "Sintered NdFeB (7300 to 7600), with neodymium, praseodymium and dysprosium.",
  },
  { name: "Samarium-cobalt magnet", category: "mat.crm.magnets", density: 8400, crm: true, description: "Sintered SmCo." },
];

/** Product types, each with the external id of its product category. */
export const PRODUCT_TYPES = [
  { name: "Kettle", category: "prod.kitchen.kettles", description: "Electric kettle for boiling water." },
  { name: "Toaster", category: "prod.kitchen.toasters", description: "Pop-up bread toaster." },
  { name: "Coffee machine", category: "prod.kitchen.coffee", description: "Drip, capsule or espresso coffee maker." },
  { name: "Blender", category: "prod.kitchen.blenders", description: "Countertop or stick blender." },
  { name: "Microwave oven", category: "prod.kitchen.microwaves", description: "Countertop microwave oven." },
  { name: "Vacuum cleaner", category: "prod.cleaning.vacuums", description: "Canister or stick vacuum cleaner." },
  { name: "Robot vacuum cleaner", category: "prod.cleaning.robot_vacuums", description: "Autonomous floor vacuum." },
  { name: "Steam iron", category: "prod.laundry.irons", description: "Clothes iron with steam." },
  { name: "Hair dryer", category: "prod.personal_care.hair_dryers", description: "Hand-held hair dryer." },
  { name: "Electric toothbrush", category: "prod.personal_care.toothbrushes", description: "Rechargeable toothbrush." },
  { name: "Desk fan", category: "prod.climate.fans", description: "Oscillating desk or pedestal fan." },
  { name: "Laptop", category: "prod.computing.laptops", description: "Portable computer." },
  { name: "Monitor", category: "prod.computing.monitors", description: "Computer display." },
  { name: "Smartphone", category: "prod.mobile.phones", description: "Touchscreen mobile phone." },
  { name: "Headphones", category: "prod.av.headphones", description: "Wired or wireless headphones." },
  { name: "Power bank", category: "prod.accessories.powerbanks", description: "Portable battery pack." },
  { name: "Cordless drill", category: "prod.tools.power.drills", description: "Battery drill driver." },
  { name: "LED bulb", category: "prod.lighting.bulbs", description: "LED retrofit lamp." },
];

/** A SQL literal for a string, number, boolean or null: strings single-quoted with quotes doubled. */
export function sqlValue(value) {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "boolean") return value ? "1" : "0";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`not a finite number: ${value}`);
    return String(value);
  }
  if (typeof value === "string") {
    if (value.includes("\0")) throw new Error("NUL character in a SQL string");
    return `'${value.replaceAll("'", "''")}'`;
  }
  throw new Error(`no SQL literal for ${typeof value}`);
}

const taxonomyId = (t) => `(SELECT id FROM taxonomies WHERE name = ${sqlValue(t.name)} AND version = ${sqlValue(t.version)})`;

function taxonomyStatement(t) {
  return `INSERT INTO taxonomies (name, version, description, domains, source) VALUES (${[
    t.name,
    t.version,
    t.description,
    JSON.stringify(t.domains),
    t.source,
  ]
    .map(sqlValue)
    .join(", ")}) ON CONFLICT (name, version) DO NOTHING;`;
}

/** One statement per category, parents first, each parent found by its external id. */
function categoryStatements(taxonomy, categories) {
  return categories.map((c) => {
    const parent = c.parent
      ? `(SELECT p.id FROM categories p WHERE p.taxonomy_id = t.id AND p.external_id = ${sqlValue(c.parent)})`
      : "NULL";
    // The WHERE clause also keeps SQLite from reading ON CONFLICT as a join constraint.
    return `INSERT INTO categories (name, description, external_id, taxonomy_id, supercategory_id)
SELECT ${sqlValue(c.name)}, ${sqlValue(c.description ?? null)}, ${sqlValue(c.id)}, t.id, ${parent}
FROM taxonomies t WHERE t.name = ${sqlValue(taxonomy.name)} AND t.version = ${sqlValue(taxonomy.version)}
ON CONFLICT (taxonomy_id, external_id) DO NOTHING;`;
  });
}

/** Links `(name, external id)` pairs from `links` into a link table, skipping links already there. */
function linkStatement(table, column, entityTable, taxonomy, links) {
  const values = links.map(([name, externalId]) => `(${sqlValue(name)}, ${sqlValue(externalId)})`).join(",\n  ");
  return `WITH l(name, external_id) AS (VALUES
  ${values})
INSERT INTO ${table} (${column}, category_id)
SELECT e.id, c.id FROM l
JOIN ${entityTable} e ON e.name = l.name
JOIN categories c ON c.external_id = l.external_id AND c.taxonomy_id = ${taxonomyId(taxonomy)}
WHERE true
ON CONFLICT DO NOTHING;`;
}

/** The idempotent SQL statements that seed the starter data, in the order they must run. */
export function starterStatements() {
  const materials = MATERIALS.map((m) => `(${[m.name, m.description ?? null, m.density, m.crm === true].map(sqlValue).join(", ")})`);
  const types = PRODUCT_TYPES.map((t) => `(${[t.name, t.description ?? null].map(sqlValue).join(", ")})`);
  return [
    taxonomyStatement(PRODUCT_TAXONOMY),
    taxonomyStatement(MATERIAL_TAXONOMY),
    ...categoryStatements(PRODUCT_TAXONOMY, PRODUCT_CATEGORIES),
    ...categoryStatements(MATERIAL_TAXONOMY, MATERIAL_CATEGORIES),
    `INSERT INTO materials (name, description, density_kg_m3, is_crm) VALUES\n  ${materials.join(",\n  ")}\nON CONFLICT (name) DO NOTHING;`,
    `INSERT INTO product_types (name, description) VALUES\n  ${types.join(",\n  ")}\nON CONFLICT (name) DO NOTHING;`,
    linkStatement(
      "material_categories",
      "material_id",
      "materials",
      MATERIAL_TAXONOMY,
      MATERIALS.map((m) => [m.name, m.category]),
    ),
    linkStatement(
      "product_type_categories",
      "product_type_id",
      "product_types",
      PRODUCT_TAXONOMY,
      PRODUCT_TYPES.map((t) => [t.name, t.category]),
    ),
  ];
}
