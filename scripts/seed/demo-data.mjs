// The demo dataset: N base products of the starter product types, each with a component tree two
// or three levels deep and bills of materials that name starter materials, owned by the demo
// account. Generated from templates with a seeded PRNG, so the same options give the same SQL.
//
// `demoStatements()` returns the SQL for ONE D1 batch (wrangler runs a --file as one batch;
// Miniflare's `db.batch` does the same): the starter data (idempotent), the demo account
// (idempotent), optionally the removal of earlier demo products, the reservation of the product
// ids from `id_blocks` (as the API's creates reserve them, src/services/products/records.ts), then
// large multi-row INSERTs whose ids are offsets from that reservation. No imports besides the
// starter data: the Workers tests import this module too.
//
// Brands are made up: the weights and compositions are plausible, not measured, and are not to be
// read as teardown results of real companies' products.
import { sqlValue, starterStatements } from "./starter-data.mjs";

/**
 * The owner of the demo products: verified and active (so its products show like anyone's), with
 * no password (hashed_password NULL: sign-in always fails) and an address under the reserved
 * .invalid domain (RFC 6761), so no password-reset mail can ever reach anyone. Nobody can act as it.
 */
export const DEMO_ACCOUNT = { username: "demo_contributor", email: "demo@relab.invalid" };

/** Demo products are dated over the two years before this instant, so runs are reproducible. */
export const DEMO_ANCHOR = Date.UTC(2026, 10, 1) / 1000;

/**
 * Statements stay below this many characters: well under D1's 100 KB limit for one statement, and
 * small because `wrangler d1 execute --file` splits the file with a character-by-character parser
 * whose cost grows with the square of a statement's length (90 KB statements made 10,000 products
 * take minutes to split; 10 KB ones take seconds).
 */
const MAX_STATEMENT_CHARS = 10_000;

// A part: name, share of the parent's mass (for all `amount` units together), materials as
// [material, mass fraction] (leaves only), and optionally children, an amount or [min, max], and
// alternative material lists to pick from.
const part = (name, share, materials, options = {}) => ({ name, share, materials, ...options });
const cord = (share) =>
  part("Power cord", share, [
    ["PVC", 0.55],
    ["Copper", 0.4],
    ["Brass", 0.05],
  ]);
const screws = (share, amount = [4, 12]) => part("Screws", share, [["Steel", 1]], { amount });
const pcb = (name, share, extra = [], options = {}) =>
  part(
    name,
    share,
    [
      ["FR-4", 0.55],
      ["Copper", 0.18],
      ["Solder (SAC305)", 0.04],
      ["Epoxy resin", 0.08],
      ["Silicon", 0.02],
      ["Tantalum", 0.004],
      ["Gold", 0.0008],
      ["Palladium", 0.0003],
      ...extra,
    ],
    options,
  );
const liIonCell = (name, share, cathode, amount) =>
  part(
    name,
    share,
    [
      [cathode, 0.3],
      ["Natural graphite", 0.18],
      ["Copper", 0.13],
      ["Aluminium", 0.1],
      ["PP", 0.04],
      ["Steel", 0.15],
    ],
    { amount },
  );
const pouchCell = (name, share, amount) =>
  part(
    name,
    share,
    [
      ["Lithium cobalt oxide", 0.38],
      ["Natural graphite", 0.2],
      ["Copper", 0.14],
      ["Aluminium", 0.14],
      ["PP", 0.05],
    ],
    { amount },
  );
/** A brushed universal motor (blenders, vacuum cleaners). */
const universalMotor = (share) =>
  part("Motor", share, null, {
    parts: [
      part("Stator", 0.5, [
        ["Steel", 0.6],
        ["Copper", 0.4],
      ]),
      part("Armature", 0.35, [
        ["Steel", 0.55],
        ["Copper", 0.4],
        ["Phenolic resin", 0.05],
      ]),
      part("Bearings", 0.05, [["Steel", 1]], { amount: 2 }),
      part("Brush holder", 0.1, [
        ["PA6", 0.6],
        ["Brass", 0.4],
      ]),
    ],
  });
/** A capacitor-run induction motor with an aluminium cage rotor (fans). */
const inductionMotor = (share) =>
  part("Motor", share, null, {
    parts: [
      part("Stator", 0.6, [
        ["Steel", 0.65],
        ["Copper", 0.35],
      ]),
      part("Rotor", 0.3, [
        ["Steel", 0.8],
        ["Aluminium", 0.2],
      ]),
      part("Sleeve bearings", 0.04, [["Brass", 1]], { amount: 2 }),
      part("Run capacitor", 0.06, [
        ["PP", 0.5],
        ["Aluminium", 0.3],
        ["PA6", 0.2],
      ]),
    ],
  });

const KITCHEN_BRANDS = ["Norvik", "Alba Home", "Kestrel", "Haverly", "Brennan", "Oakmere", "Solvay Kitchen", "Tidewell"];
const CARE_BRANDS = ["Lunessa", "Haverly", "Orla", "Kestrel", "Vireo"];
const TECH_BRANDS = ["Voltaro", "Orbis", "Lumetra", "Nexa", "Corvin", "Tessaly", "Aster", "Quill"];
const TOOL_BRANDS = ["Granite", "Forgeline", "Trevalt", "Hollis"];

const CIRCULARITY = {
  recyclability: [
    "Housing plastics are marked (>PP<, >ABS<) and separate cleanly.",
    "Mixed plastics with metal inserts; shredding needed before sorting.",
    "Mostly one metal and one plastic; high recovery expected.",
  ],
  disassemblability: [
    "Standard Phillips screws throughout; opened in under five minutes.",
    "Clips and glue; the housing cracked when opened.",
    "Tamper-proof screws on the base; a special bit is needed.",
    "Battery glued in place; heat needed to remove it.",
  ],
  remanufacturability: [
    "Wear parts can be replaced with standard tools.",
    "Main assembly reusable after cleaning; seals need replacing.",
    "Board is a single unit; repairs would need component-level soldering.",
  ],
};

/** The product templates: type (a starter product type), naming, ranges (g, cm) and the part tree. */
export const TEMPLATES = [
  {
    type: "Kettle",
    noun: "Kettle",
    brands: KITCHEN_BRANDS,
    lines: ["Classic", "Aura", "Quick Boil", "Steel", "Compact", "Retro"],
    variants: ["1.0 L", "1.5 L", "1.7 L"],
    model: "KT",
    weight: [850, 1450],
    dims: [
      [21, 27],
      [14, 18],
      [20, 25],
    ],
    parts: [
      part("Housing", 0.42, null, {
        parts: [
          part("Body shell", 0.72, null, {
            alternatives: [
              [
                ["Stainless steel", 0.8],
                ["PP", 0.2],
              ],
              [["PP", 1]],
              [
                ["Borosilicate glass", 0.85],
                ["PP", 0.15],
              ],
            ],
          }),
          part("Handle", 0.22, [["PP", 1]]),
          part("Water level window", 0.06, [["PC", 1]]),
        ],
      }),
      part("Lid", 0.09, null, {
        parts: [
          part("Lid cover", 0.85, [["PP", 1]]),
          part("Hinge spring", 0.03, [["Stainless steel", 1]]),
          part("Release button", 0.12, [["ABS", 1]]),
        ],
      }),
      part("Heating element", 0.22, null, {
        parts: [
          part("Heating plate", 0.7, [
            ["Stainless steel", 0.85],
            ["Aluminium", 0.15],
          ]),
          part("Sheathed element", 0.2, [
            ["Stainless steel", 0.55],
            ["Magnesium oxide", 0.35],
            ["Nichrome", 0.1],
          ]),
          part("Thermostat", 0.1, null, {
            parts: [
              part("Bimetal disc", 0.25, [
                ["Steel", 0.6],
                ["Nickel", 0.4],
              ]),
              part("Contact set", 0.35, [
                ["Brass", 0.9],
                ["Silver", 0.1],
              ]),
              part("Thermostat body", 0.4, [["Phenolic resin", 1]]),
            ],
          }),
        ],
      }),
      part("Power base", 0.22, null, {
        parts: [
          part("Base shell", 0.55, [["PP", 1]]),
          cord(0.38),
          part("Rubber feet", 0.02, [["Silicone rubber", 1]], { amount: 4 }),
          part("Base connector", 0.05, [
            ["Brass", 0.6],
            ["PA6", 0.4],
          ]),
        ],
      }),
      part("Limescale filter", 0.02, [
        ["PA6", 0.7],
        ["Stainless steel", 0.3],
      ]),
    ],
    bom: [
      ["Steel", 0.01],
      ["Paper", 0.002],
    ],
  },
  {
    type: "Toaster",
    noun: "Toaster",
    brands: KITCHEN_BRANDS,
    lines: ["Classic", "Breakfast", "Wide Slot", "Steel", "Long Slot"],
    variants: ["2-slice", "4-slice"],
    model: "TS",
    weight: [950, 1800],
    dims: [
      [18, 22],
      [26, 38],
      [15, 20],
    ],
    parts: [
      part("Housing", 0.38, null, {
        parts: [
          part("Outer shell", 0.7, null, {
            alternatives: [
              [["Stainless steel", 1]],
              [["PP", 1]],
              [
                ["Steel", 0.95],
                ["Epoxy resin", 0.05],
              ],
            ],
          }),
          part("End caps", 0.25, [["PP", 1]], { amount: 2 }),
          part("Crumb tray", 0.05, [["Steel", 1]]),
        ],
      }),
      part("Heating elements", 0.16, null, {
        parts: [
          part(
            "Mica element",
            1,
            [
              ["Mica", 0.75],
              ["Nichrome", 0.25],
            ],
            { amount: [3, 5] },
          ),
        ],
      }),
      part("Bread carriage", 0.16, null, {
        parts: [
          part("Carriage frame", 0.7, [["Steel", 1]]),
          part("Lever", 0.15, [["ABS", 1]]),
          part("Return spring", 0.15, [["Steel", 1]], { amount: 2 }),
        ],
      }),
      part("Controls", 0.08, null, {
        parts: [
          pcb("Timer board", 0.55),
          part("Browning knob", 0.1, [["ABS", 1]]),
          part("Holding magnet", 0.35, [
            ["Steel", 0.6],
            ["Copper", 0.4],
          ]),
        ],
      }),
      part("Internal frame", 0.12, [["Steel", 1]]),
      cord(0.1),
    ],
    bom: [
      ["Steel", 0.008],
      ["Paper", 0.001],
    ],
  },
  {
    type: "Coffee machine",
    noun: "Coffee Machine",
    brands: KITCHEN_BRANDS,
    lines: ["Barista", "Crema", "Morning", "Espresso Pro", "Filter"],
    variants: ["", "Plus", "II"],
    model: "CM",
    weight: [2400, 4800],
    dims: [
      [28, 38],
      [18, 27],
      [28, 40],
    ],
    parts: [
      part("Housing", 0.3, null, {
        parts: [
          part("Side panels", 0.5, [["ABS", 1]], { amount: 2 }),
          part("Front panel", 0.3, [
            ["ABS", 0.8],
            ["Stainless steel", 0.2],
          ]),
          part("Drip tray", 0.2, [
            ["PP", 0.7],
            ["Stainless steel", 0.3],
          ]),
        ],
      }),
      part("Water tank", 0.1, [
        ["PC", 0.95],
        ["Silicone rubber", 0.05],
      ]),
      part("Pump", 0.12, null, {
        parts: [
          part("Solenoid coil", 0.55, [
            ["Copper", 0.6],
            ["Steel", 0.4],
          ]),
          part("Pump body", 0.35, [
            ["PA6", 0.8],
            ["Brass", 0.2],
          ]),
          part("Piston", 0.1, [["Stainless steel", 1]]),
        ],
      }),
      part("Thermoblock", 0.24, null, {
        parts: [
          part("Block", 0.8, [
            ["Aluminium", 0.85],
            ["Stainless steel", 0.15],
          ]),
          part("Sheathed element", 0.16, [
            ["Stainless steel", 0.55],
            ["Magnesium oxide", 0.35],
            ["Nichrome", 0.1],
          ]),
          part(
            "Thermal fuse",
            0.04,
            [
              ["Alumina", 0.5],
              ["Copper", 0.5],
            ],
            { amount: 2 },
          ),
        ],
      }),
      part("Brew unit", 0.12, [
        ["POM", 0.6],
        ["PA6", 0.3],
        ["Stainless steel", 0.1],
      ]),
      part("Control unit", 0.05, null, {
        parts: [
          pcb("Control board", 0.7),
          part("Display", 0.3, [
            ["Soda-lime glass", 0.6],
            ["PC", 0.35],
            ["Indium tin oxide", 0.002],
          ]),
        ],
      }),
      part("Hoses", 0.03, [["Silicone rubber", 1]], { amount: [3, 6] }),
      cord(0.04),
    ],
    bom: [
      ["Steel", 0.01],
      ["Paper", 0.001],
    ],
  },
  {
    type: "Blender",
    noun: "Blender",
    brands: KITCHEN_BRANDS,
    lines: ["Power", "Smoothie", "Vortex", "Chef", "Pulse"],
    variants: ["600 W", "1000 W", "1200 W"],
    model: "BL",
    weight: [1800, 4300],
    dims: [
      [38, 48],
      [16, 22],
      [17, 24],
    ],
    parts: [
      part("Jar", 0.36, null, {
        parts: [
          part("Jar body", 0.85, null, { alternatives: [[["Borosilicate glass", 1]], [["PC", 1]], [["PET", 1]]] }),
          part("Jar lid", 0.15, [
            ["PP", 0.8],
            ["Silicone rubber", 0.2],
          ]),
        ],
      }),
      part("Blade assembly", 0.07, null, {
        parts: [
          part("Blades", 0.6, [["Stainless steel", 1]]),
          part("Blade bearing", 0.25, [["Steel", 1]]),
          part("Seal ring", 0.15, [["Silicone rubber", 1]]),
        ],
      }),
      part("Motor base", 0.53, null, {
        parts: [
          part("Base housing", 0.35, [["ABS", 1]]),
          universalMotor(0.55),
          part("Speed switch", 0.06, [
            ["ABS", 0.6],
            ["Brass", 0.4],
          ]),
          part("Feet", 0.04, [["Silicone rubber", 1]], { amount: 4 }),
        ],
      }),
      cord(0.04),
    ],
    bom: [
      ["Steel", 0.005],
      ["Paper", 0.001],
    ],
  },
  {
    type: "Microwave oven",
    noun: "Microwave",
    brands: KITCHEN_BRANDS,
    lines: ["Solo", "Grill", "Combi", "Inverter"],
    variants: ["20 L", "23 L", "25 L", "28 L"],
    model: "MW",
    weight: [10500, 17000],
    dims: [
      [26, 32],
      [44, 53],
      [34, 43],
    ],
    parts: [
      part("Cabinet", 0.28, [
        ["Steel", 0.96],
        ["Epoxy resin", 0.04],
      ]),
      part("Oven cavity", 0.18, [
        ["Steel", 0.92],
        ["Epoxy resin", 0.08],
      ]),
      part("Door", 0.15, null, {
        parts: [
          part("Door frame", 0.5, [["Steel", 1]]),
          part("Window", 0.35, [["Soda-lime glass", 1]]),
          part("Door panel", 0.15, [["ABS", 1]]),
        ],
      }),
      part("Magnetron", 0.08, null, {
        parts: [
          part("Anode block", 0.55, [
            ["Copper", 0.75],
            ["Steel", 0.25],
          ]),
          part("Magnets", 0.3, [["Ferrite", 1]], { amount: 2 }),
          part("Cooling fins", 0.15, [["Aluminium", 1]]),
        ],
      }),
      part("High-voltage transformer", 0.2, null, {
        parts: [
          part("Transformer core", 0.75, [["Steel", 1]]),
          part("Windings", 0.25, [
            ["Copper", 0.7],
            ["Aluminium", 0.3],
          ]),
        ],
      }),
      part("High-voltage capacitor", 0.02, [
        ["Aluminium", 0.4],
        ["PP", 0.3],
        ["Steel", 0.3],
      ]),
      part("Turntable", 0.06, null, {
        parts: [
          part("Glass plate", 0.8, [["Soda-lime glass", 1]]),
          part("Roller ring", 0.1, [["PP", 1]]),
          part("Turntable motor", 0.1, [
            ["Steel", 0.5],
            ["Copper", 0.3],
            ["PA6", 0.2],
          ]),
        ],
      }),
      pcb("Control board", 0.02),
      cord(0.01),
    ],
    bom: [
      ["Steel", 0.003],
      ["Paper", 0.0005],
    ],
  },
  {
    type: "Vacuum cleaner",
    noun: "Vacuum Cleaner",
    brands: KITCHEN_BRANDS,
    lines: ["Cyclone", "Silent", "Compact", "Pet", "Allergy"],
    variants: ["", "Plus", "Pro"],
    model: "VC",
    weight: [3800, 6800],
    dims: [
      [25, 35],
      [28, 36],
      [38, 48],
    ],
    parts: [
      part("Body", 0.34, null, {
        parts: [
          part("Upper shell", 0.5, [["ABS", 1]]),
          part("Lower shell", 0.35, [["PP", 1]]),
          part(
            "Wheels",
            0.15,
            [
              ["PP", 0.8],
              ["TPE", 0.2],
            ],
            { amount: 2 },
          ),
        ],
      }),
      universalMotor(0.28),
      part("Filtration", 0.08, null, {
        parts: [
          part("Dust container", 0.7, [["PC", 1]]),
          part("HEPA filter", 0.3, [
            ["Polyester fibre", 0.6],
            ["PP", 0.4],
          ]),
        ],
      }),
      part("Cord reel", 0.12, null, {
        parts: [
          part("Reel", 0.4, [
            ["PP", 0.8],
            ["Steel", 0.2],
          ]),
          cord(0.6),
        ],
      }),
      part("Hose and tube", 0.16, null, {
        parts: [
          part("Hose", 0.35, [
            ["PP", 0.8],
            ["Steel", 0.2],
          ]),
          part("Telescopic tube", 0.35, [
            ["Aluminium", 0.9],
            ["ABS", 0.1],
          ]),
          part("Floor nozzle", 0.3, [
            ["ABS", 0.8],
            ["PA6", 0.1],
            ["Natural rubber", 0.1],
          ]),
        ],
      }),
    ],
    bom: [
      ["Steel", 0.005],
      ["Paper", 0.001],
    ],
  },
  {
    type: "Steam iron",
    noun: "Steam Iron",
    brands: KITCHEN_BRANDS,
    lines: ["Glide", "Steam Pro", "Ceramic", "Easy"],
    variants: ["2200 W", "2400 W", "2600 W"],
    model: "SI",
    weight: [1000, 1700],
    dims: [
      [13, 16],
      [11, 13],
      [26, 31],
    ],
    parts: [
      part("Soleplate assembly", 0.45, null, {
        parts: [
          part("Soleplate", 0.8, null, {
            alternatives: [
              [
                ["Aluminium", 0.9],
                ["Stainless steel", 0.1],
              ],
              [
                ["Aluminium", 0.95],
                ["Alumina", 0.05],
              ],
            ],
          }),
          part("Sheathed element", 0.12, [
            ["Stainless steel", 0.55],
            ["Magnesium oxide", 0.35],
            ["Nichrome", 0.1],
          ]),
          part("Thermostat", 0.08, [
            ["Brass", 0.5],
            ["Steel", 0.3],
            ["Phenolic resin", 0.2],
          ]),
        ],
      }),
      part("Housing", 0.3, null, {
        parts: [part("Upper shell", 0.55, [["PP", 1]]), part("Water tank", 0.35, [["PC", 1]]), part("Temperature dial", 0.1, [["ABS", 1]])],
      }),
      part("Steam chamber", 0.07, [
        ["Aluminium", 0.8],
        ["Silicone rubber", 0.2],
      ]),
      cord(0.18),
    ],
    bom: [
      ["Steel", 0.004],
      ["Paper", 0.001],
    ],
  },
  {
    type: "Hair dryer",
    noun: "Hair Dryer",
    brands: CARE_BRANDS,
    lines: ["Salon", "Travel", "Ionic", "Turbo"],
    variants: ["1600 W", "2000 W", "2200 W"],
    model: "HD",
    weight: [380, 820],
    dims: [
      [22, 28],
      [8, 10],
      [20, 27],
    ],
    parts: [
      part("Housing", 0.38, null, {
        parts: [part("Shell halves", 0.8, [["PC", 1]], { amount: 2 }), part("Concentrator nozzle", 0.2, [["PA6", 1]])],
      }),
      part("Fan unit", 0.2, null, {
        parts: [
          part("DC motor", 0.7, [
            ["Steel", 0.5],
            ["Copper", 0.3],
            ["Ferrite", 0.2],
          ]),
          part("Fan", 0.3, [["PA6", 1]]),
        ],
      }),
      part("Heater", 0.12, [
        ["Mica", 0.65],
        ["Nichrome", 0.35],
      ]),
      part(
        "Switches",
        0.05,
        [
          ["ABS", 0.7],
          ["Brass", 0.3],
        ],
        { amount: 2 },
      ),
      cord(0.25),
    ],
    bom: [["Steel", 0.004]],
  },
  {
    type: "Electric toothbrush",
    noun: "Toothbrush",
    brands: CARE_BRANDS,
    lines: ["Sonic", "Clean", "Pro", "Kids"],
    variants: ["", "2", "3"],
    model: "TB",
    weight: [110, 185],
    dims: [
      [22, 26],
      [2.5, 3.2],
      [2.5, 3.2],
    ],
    parts: [
      part("Handle", 0.45, [
        ["PP", 0.8],
        ["TPE", 0.2],
      ]),
      part("Drive unit", 0.25, null, {
        parts: [
          part("Drive motor", 0.75, [
            ["Steel", 0.45],
            ["Copper", 0.25],
            ["Neodymium magnet", 0.3],
          ]),
          part("Drive shaft", 0.25, [["Stainless steel", 1]]),
        ],
      }),
      liIonCell("Battery cell", 0.18, "Lithium cobalt oxide", 1),
      pcb("Charging board", 0.05),
      part("Brush head", 0.07, [
        ["PP", 0.7],
        ["PA6", 0.3],
      ]),
    ],
    bom: [["Stainless steel", 0.002]],
  },
  {
    type: "Desk fan",
    noun: "Fan",
    brands: KITCHEN_BRANDS,
    lines: ["Breeze", "Quiet", "Tower", "Oscillating"],
    variants: ["30 cm", "40 cm"],
    model: "DF",
    weight: [1700, 3600],
    dims: [
      [38, 60],
      [30, 42],
      [20, 30],
    ],
    parts: [
      part("Blade", 0.1, [["PP", 1]]),
      part(
        "Guards",
        0.18,
        [
          ["Steel", 0.9],
          ["PP", 0.1],
        ],
        { amount: 2 },
      ),
      part("Motor unit", 0.42, null, {
        parts: [
          inductionMotor(0.8),
          part("Oscillation gearbox", 0.15, [
            ["POM", 0.6],
            ["Steel", 0.4],
          ]),
          part("Motor cover", 0.05, [["ABS", 1]]),
        ],
      }),
      part("Stand", 0.25, [
        ["ABS", 0.6],
        ["Steel", 0.4],
      ]),
      cord(0.05),
    ],
    bom: [["Steel", 0.005]],
  },
  {
    type: "Laptop",
    noun: "Laptop",
    brands: TECH_BRANDS,
    lines: ["Air", "Book", "Pro", "Slim", "Studio", "Go"],
    variants: ["13", "14", "15", "16"],
    model: "LT",
    weight: [1150, 2400],
    dims: [
      [1.4, 2.3],
      [30, 36],
      [21, 25],
    ],
    parts: [
      part("Display assembly", 0.28, null, {
        parts: [
          part("LCD panel", 0.55, [
            ["Soda-lime glass", 0.5],
            ["PMMA", 0.25],
            ["Steel", 0.15],
            ["PET", 0.08],
            ["Indium tin oxide", 0.001],
          ]),
          part("Display lid", 0.3, null, { alternatives: [[["Aluminium", 1]], [["PC/ABS", 1]], [["Magnesium", 1]]] }),
          part("Webcam module", 0.03, [
            ["FR-4", 0.5],
            ["Silicon", 0.1],
            ["PC", 0.4],
          ]),
          part("Hinges", 0.12, [["Steel", 1]], { amount: 2 }),
        ],
      }),
      part("Bottom cover", 0.14, null, { alternatives: [[["Aluminium", 1]], [["PC/ABS", 1]]] }),
      part("Keyboard", 0.12, null, {
        parts: [
          part("Keycaps", 0.35, [["ABS", 1]]),
          part("Keyboard plate", 0.5, [
            ["Steel", 0.8],
            ["PET", 0.2],
          ]),
          part("Backlight", 0.15, [
            ["PMMA", 0.7],
            ["PET", 0.3],
          ]),
        ],
      }),
      part("Mainboard", 0.12, null, {
        parts: [
          pcb("Logic board", 0.6),
          part("Processor", 0.12, [
            ["Silicon", 0.3],
            ["FR-4", 0.4],
            ["Copper", 0.3],
            ["Gold", 0.002],
          ]),
          part(
            "Memory module",
            0.13,
            [
              ["FR-4", 0.6],
              ["Silicon", 0.15],
              ["Copper", 0.2],
              ["Gold", 0.003],
            ],
            { amount: [1, 2] },
          ),
          part("SSD", 0.15, [
            ["FR-4", 0.6],
            ["Silicon", 0.15],
            ["Copper", 0.2],
            ["Gold", 0.002],
          ]),
        ],
      }),
      part("Battery pack", 0.2, null, {
        parts: [pouchCell("Pouch cell", 0.88, [3, 4]), pcb("Battery management board", 0.07), part("Battery frame", 0.05, [["PC", 1]])],
      }),
      part("Cooling", 0.08, null, {
        parts: [
          part("Fan", 0.4, [
            ["PA6", 0.6],
            ["Copper", 0.2],
            ["Neodymium magnet", 0.2],
          ]),
          part("Heat pipe", 0.6, [["Copper", 1]]),
        ],
      }),
      part(
        "Speakers",
        0.03,
        [
          ["PC/ABS", 0.6],
          ["Neodymium magnet", 0.3],
          ["Copper", 0.1],
        ],
        { amount: 2 },
      ),
      part("Touchpad", 0.03, [
        ["Soda-lime glass", 0.6],
        ["FR-4", 0.4],
      ]),
    ],
    bom: [
      ["Steel", 0.006],
      ["Polyester fibre", 0.001],
    ],
  },
  {
    type: "Smartphone",
    noun: "Phone",
    brands: TECH_BRANDS,
    lines: ["One", "Edge", "Lite", "Ultra", "Neo", "Mini"],
    variants: ["", "5G", "Pro", "Plus"],
    model: "SP",
    weight: [140, 235],
    dims: [
      [14.5, 16.6],
      [6.9, 7.9],
      [0.74, 0.96],
    ],
    parts: [
      part("Display", 0.2, null, {
        parts: [
          part("Cover glass", 0.55, [["Aluminosilicate glass", 1]]),
          part("OLED panel", 0.45, [
            ["PET", 0.5],
            ["Soda-lime glass", 0.3],
            ["Indium tin oxide", 0.002],
            ["Copper", 0.05],
          ]),
        ],
      }),
      part("Frame", 0.16, null, { alternatives: [[["Aluminium", 1]], [["Stainless steel", 1]], [["Titanium", 1]]] }),
      part("Back cover", 0.1, null, { alternatives: [[["Aluminosilicate glass", 1]], [["PC", 1]]] }),
      pouchCell("Battery", 0.27, 1),
      part("Logic board", 0.12, null, {
        parts: [
          pcb("Main board", 0.75, [["Gallium arsenide", 0.002]]),
          part("Application processor", 0.15, [
            ["Silicon", 0.35],
            ["Copper", 0.25],
            ["Epoxy resin", 0.4],
          ]),
          part("Shield cans", 0.1, [["Stainless steel", 1]], { amount: [2, 4] }),
        ],
      }),
      part("Camera module", 0.05, null, {
        parts: [
          part(
            "Lens stack",
            0.4,
            [
              ["PMMA", 0.7],
              ["Aluminium", 0.3],
            ],
            { amount: [2, 4] },
          ),
          part(
            "Image sensor",
            0.3,
            [
              ["Silicon", 0.5],
              ["FR-4", 0.5],
            ],
            { amount: [2, 4] },
          ),
          part("Camera bracket", 0.3, [["Stainless steel", 1]]),
        ],
      }),
      part("Loudspeaker", 0.03, [
        ["PC", 0.5],
        ["Neodymium magnet", 0.4],
        ["Copper", 0.1],
      ]),
      part("Vibration motor", 0.02, [
        ["Tungsten", 0.4],
        ["Copper", 0.3],
        ["Neodymium magnet", 0.3],
      ]),
      part("USB-C port", 0.01, [
        ["Stainless steel", 0.7],
        ["Gold", 0.005],
        ["PA6", 0.3],
      ]),
    ],
    bom: [
      ["Stainless steel", 0.01],
      ["Epoxy resin", 0.01],
    ],
  },
  {
    type: "Headphones",
    noun: "Headphones",
    brands: TECH_BRANDS,
    lines: ["Studio", "Travel", "Quiet", "Bass", "Over-Ear"],
    variants: ["", "ANC", "Wireless"],
    model: "HP",
    weight: [180, 360],
    dims: [
      [17, 22],
      [15, 19],
      [7, 9.5],
    ],
    parts: [
      part("Headband", 0.28, [
        ["Stainless steel", 0.4],
        ["PA6", 0.4],
        ["Polyurethane foam", 0.05],
        ["TPE", 0.15],
      ]),
      part("Ear cup", 0.62, null, {
        amount: 2,
        parts: [
          part("Cup shell", 0.45, [["ABS", 1]]),
          part("Driver", 0.3, [
            ["Neodymium magnet", 0.45],
            ["Steel", 0.3],
            ["PET", 0.1],
            ["Copper", 0.15],
          ]),
          part("Ear cushion", 0.25, [
            ["Polyurethane foam", 0.3],
            ["Polyester fibre", 0.4],
            ["TPE", 0.3],
          ]),
        ],
      }),
      pouchCell("Battery", 0.06, 1),
      pcb("Bluetooth board", 0.04),
    ],
    bom: [["Steel", 0.004]],
  },
  {
    type: "Power bank",
    noun: "Power Bank",
    brands: TECH_BRANDS,
    lines: ["Charge", "Boost", "Slim", "Max"],
    variants: ["5000 mAh", "10000 mAh", "20000 mAh"],
    model: "PB",
    weight: [150, 460],
    dims: [
      [1.4, 2.8],
      [6.5, 8],
      [10, 16],
    ],
    parts: [
      part("Cell pack", 0.68, null, {
        parts: [liIonCell("18650 cell", 0.95, "Lithium nickel manganese cobalt oxide", [2, 4]), part("Cell holder", 0.05, [["PC", 1]])],
      }),
      part("Case", 0.22, null, {
        alternatives: [
          [["PC/ABS", 1]],
          [
            ["Aluminium", 0.9],
            ["PC", 0.1],
          ],
        ],
      }),
      pcb("Charge controller board", 0.08, [["Gallium nitride", 0.001]]),
      part(
        "USB connectors",
        0.02,
        [
          ["Stainless steel", 0.6],
          ["PA6", 0.35],
          ["Gold", 0.002],
        ],
        { amount: [2, 3] },
      ),
    ],
    bom: [["Steel", 0.002]],
  },
  {
    type: "Cordless drill",
    noun: "Drill Driver",
    brands: TOOL_BRANDS,
    lines: ["Compact", "Brushless", "Heavy Duty", "Pro"],
    variants: ["12 V", "18 V"],
    model: "DD",
    weight: [1050, 1950],
    dims: [
      [18, 25],
      [6, 8],
      [17, 23],
    ],
    parts: [
      part("Housing", 0.24, null, {
        parts: [
          part(
            "Housing halves",
            0.8,
            [
              ["PA6", 0.85],
              ["TPE", 0.15],
            ],
            { amount: 2 },
          ),
          part("Trigger switch", 0.2, [
            ["PA6", 0.6],
            ["Brass", 0.3],
            ["Silver", 0.01],
          ]),
        ],
      }),
      part("Motor", 0.24, [
        ["Steel", 0.5],
        ["Copper", 0.3],
        ["Neodymium magnet", 0.2],
      ]),
      part("Gearbox", 0.18, null, {
        parts: [
          part("Planetary gears", 0.6, [["Steel", 1]], { amount: [6, 9] }),
          part("Gear housing", 0.3, [
            ["PA6", 0.7],
            ["Steel", 0.3],
          ]),
          part("Clutch ring", 0.1, [["PA6", 1]]),
        ],
      }),
      part("Chuck", 0.12, [
        ["Steel", 0.85],
        ["PA6", 0.15],
      ]),
      part("Battery pack", 0.22, null, {
        parts: [
          liIonCell("18650 cell", 0.8, "Lithium nickel manganese cobalt oxide", [3, 5]),
          part("Battery case", 0.15, [["PC", 1]]),
          pcb("Battery board", 0.05),
        ],
      }),
    ],
    bom: [["Steel", 0.01]],
  },
  {
    type: "LED bulb",
    noun: "LED Bulb",
    brands: TECH_BRANDS,
    lines: ["Classic", "Warm", "Filament", "Smart"],
    variants: ["E27 806 lm", "E27 1055 lm", "E14 470 lm"],
    model: "LB",
    weight: [30, 85],
    dims: [
      [9.5, 12],
      [5.5, 7],
      [5.5, 7],
    ],
    parts: [
      part("Diffuser dome", 0.2, [["PC", 1]]),
      part("Heat sink", 0.35, [
        ["Aluminium", 0.6],
        ["PC", 0.4],
      ]),
      part("LED board", 0.12, [
        ["Aluminium", 0.7],
        ["FR-4", 0.15],
        ["Gallium nitride", 0.004],
        ["Silicone rubber", 0.05],
        ["Copper", 0.09],
      ]),
      pcb("Driver board", 0.2),
      part("Lamp cap", 0.13, [
        ["Aluminium", 0.75],
        ["Soda-lime glass", 0.25],
      ]),
    ],
    bom: [["Epoxy resin", 0.01]],
  },
];

/** mulberry32: a small, fast, seeded 32-bit PRNG; returns floats in [0, 1). */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const round = (value, digits) => Number(value.toFixed(digits));
/** Four significant digits, never 0 for a positive value. */
const significant = (value) => Number(value.toPrecision(4));

/** A quantity in grams as a bill-of-materials entry: kilograms from 1 kg up, grams below. */
function quantityOf(grams) {
  return grams >= 1000 ? { quantity: significant(grams / 1000), unit: "kg" } : { quantity: significant(grams), unit: "g" };
}

/** Checks that every template names a starter product type and starter materials. */
export function checkTemplates(materialNames, typeNames) {
  const materials = new Set(materialNames);
  const types = new Set(typeNames);
  const problems = [];
  const walk = (node, where) => {
    for (const list of [node.materials ?? [], ...(node.alternatives ?? [])]) {
      for (const [material] of list) if (!materials.has(material)) problems.push(`${where}: unknown material ${material}`);
    }
    for (const child of node.parts ?? []) walk(child, `${where} > ${child.name}`);
  };
  for (const t of TEMPLATES) {
    if (!types.has(t.type)) problems.push(`${t.type}: unknown product type`);
    for (const [material] of t.bom ?? []) if (!materials.has(material)) problems.push(`${t.type}: unknown material ${material}`);
    t.parts.forEach((p) => walk(p, `${t.type} > ${p.name}`));
  }
  return problems;
}

/**
 * Generates `count` products: records (base first, then its components depth first, each with
 * `parent` the index of its parent record) and bill-of-materials entries keyed by record index.
 */
export function generateDemo(count, seed = 1) {
  const random = prng(seed);
  const pick = (list) => list[Math.floor(random() * list.length)];
  const between = (min, max) => min + random() * (max - min);
  const integer = ([min, max]) => min + Math.floor(random() * (max - min + 1));
  const records = [];
  const bom = [];
  const span = 2 * 365 * 86400;

  const addBom = (index, weightG, materials) => {
    const totals = new Map();
    for (const [material, fraction] of materials) totals.set(material, (totals.get(material) ?? 0) + weightG * fraction);
    for (const [material, grams] of totals) if (grams > 0) bom.push({ record: index, material, ...quantityOf(grams) });
  };

  const addPart = (node, parentIndex, parentWeight, depth, created) => {
    const amount = Array.isArray(node.amount) ? integer(node.amount) : (node.amount ?? 1);
    const weight = Math.max(0.1, round((parentWeight * node.share * between(0.9, 1.1)) / amount, 1));
    const index = records.length;
    records.push({ parent: parentIndex, amount, depth, name: node.name, weight_g: weight, created });
    const materials = node.alternatives ? pick(node.alternatives) : node.materials;
    if (node.parts) {
      for (const child of node.parts) addPart(child, index, weight, depth + 1, created);
    } else if (materials) {
      addBom(index, weight, materials);
    }
  };

  for (let i = 0; i < count; i++) {
    const t = pick(TEMPLATES);
    const brand = pick(t.brands);
    const line = pick(t.lines);
    const variant = pick(t.variants);
    const modelNumber = `${t.model}-${100 + Math.floor(random() * 900)}${pick(["", "0", "5", "X", "S"])}`;
    const weight = round(between(...t.weight), 0);
    const [height, width, depthCm] = t.dims.map(([min, max]) => round(between(min, max), 1));
    const created = DEMO_ANCHOR - Math.floor(random() * span);
    const circularity =
      random() < 0.6
        ? JSON.stringify(
            Object.fromEntries(
              Object.entries(CIRCULARITY)
                .filter(() => random() < 0.7)
                .map(([k, notes]) => [k, pick(notes)]),
            ),
          )
        : null;
    const index = records.length;
    records.push({
      parent: null,
      amount: null,
      depth: 0,
      name: [brand, line, t.noun, variant].filter(Boolean).join(" "),
      description: `${t.type} taken apart for the relab demo dataset: ${t.parts.length} main assemblies, weighed and sorted by material.`,
      brand: brand.toLowerCase(),
      model: modelNumber,
      weight_g: weight,
      height_cm: height,
      width_cm: width,
      depth_cm: depthCm,
      circularity: circularity === "{}" ? null : circularity,
      type: t.type,
      created,
    });
    if (t.bom) addBom(index, weight, t.bom);
    for (const node of t.parts) addPart(node, index, weight, 1, created);
  }
  return { records, bom };
}

/** Joins row literals into INSERT statements of at most MAX_STATEMENT_CHARS characters. */
function chunked(rows, head, tail, max) {
  const statements = [];
  let current = [];
  let length = head.length + tail.length;
  for (const row of rows) {
    if (current.length > 0 && length + row.length + 2 > max) {
      statements.push(`${head}${current.join(",\n")}${tail}`);
      current = [];
      length = head.length + tail.length;
    }
    current.push(row);
    length += row.length + 2;
  }
  if (current.length > 0) statements.push(`${head}${current.join(",\n")}${tail}`);
  return statements;
}

// By name AND address: should someone else hold the name, the owner is NULL and the batch fails
// (NOT NULL) rather than adding to, or with --reset deleting, that account's products.
const demoOwner = `(SELECT id FROM users WHERE username = ${sqlValue(DEMO_ACCOUNT.username)} AND email = ${sqlValue(DEMO_ACCOUNT.email)})`;

/** Counts of the demo account's records, as the last statement of a batch. */
export const DEMO_COUNTS_QUERY = `SELECT
  (SELECT count(*) FROM products WHERE owner_id = ${demoOwner} AND parent_id IS NULL) AS base_products,
  (SELECT count(*) FROM products WHERE owner_id = ${demoOwner} AND parent_id IS NOT NULL) AS components,
  (SELECT count(*) FROM bill_of_materials WHERE product_id IN (SELECT id FROM products WHERE owner_id = ${demoOwner})) AS bom_entries,
  (SELECT max(depth) FROM products WHERE owner_id = ${demoOwner}) AS max_depth,
  (SELECT next_id FROM id_blocks WHERE name = 'products') AS next_product_id;`;

/**
 * The statements that add `products` demo products (seeded with `seed`) in one batch; with
 * `reset`, the demo account's earlier products are deleted first (components and bills of
 * materials go with them by ON DELETE CASCADE). `products: 0` with `reset` only deletes.
 * `maxStatementChars` bounds each INSERT's length.
 */
export function demoStatements({ products, seed = 1, reset = false, maxStatementChars = MAX_STATEMENT_CHARS }) {
  if (!Number.isInteger(products) || products < 0) throw new Error("products must be a non-negative integer");
  const { records, bom } = generateDemo(products, seed);
  const total = records.length;
  const base = `(SELECT next_id - ${total} AS base FROM id_blocks WHERE name = 'products')`;

  const values = (row) => `(${row.map(sqlValue).join(",")})`;
  const owner = `CROSS JOIN (SELECT ${demoOwner} AS id) o`;
  // Base products and components apart, so component rows carry no columns that are always
  // NULL for them. NULL + base stays NULL: base products keep no parent. A NULL base (no
  // id_blocks row) or owner fails the NOT NULL and CHECK constraints, and the whole batch with them.
  const baseRows = [];
  const componentRows = [];
  records.forEach((r, k) => {
    if (r.parent === null) {
      baseRows.push(
        values([
          k,
          r.name,
          r.description,
          r.brand,
          r.model,
          r.weight_g,
          r.height_cm,
          r.width_cm,
          r.depth_cm,
          r.circularity,
          r.type,
          r.created,
        ]),
      );
    } else {
      componentRows.push(values([k, r.parent, r.amount, r.depth, r.name, r.weight_g, r.created]));
    }
  });
  const baseHead =
    "WITH v(k, name, description, brand, model, weight_g, height_cm, width_cm, depth_cm, circularity, type, created) AS (VALUES\n";
  const baseTail = `)
INSERT INTO products (id, parent_id, amount_in_parent, depth, owner_id, name, description, brand, model, weight_g,
  height_cm, width_cm, depth_cm, circularity_properties, product_type_id, created_at, updated_at)
SELECT b.base + v.k, NULL, NULL, 0, o.id, v.name, v.description, v.brand, v.model, v.weight_g,
  v.height_cm, v.width_cm, v.depth_cm, v.circularity, t.id, v.created, v.created
FROM v CROSS JOIN ${base} b ${owner}
LEFT JOIN product_types t ON t.name = v.type
WHERE true;`;
  const componentHead = "WITH v(k, pk, amount, depth, name, weight_g, created) AS (VALUES\n";
  const componentTail = `)
INSERT INTO products (id, parent_id, amount_in_parent, depth, owner_id, name, weight_g, created_at, updated_at)
SELECT b.base + v.k, b.base + v.pk, v.amount, v.depth, o.id, v.name, v.weight_g, v.created, v.created
FROM v CROSS JOIN ${base} b ${owner}
WHERE true;`;

  // Entries take their record's dates; the records are in by then (earlier statements).
  const bomRows = bom.map((e) => values([e.record, e.material, e.quantity, e.unit]));
  const bomHead = "WITH v(k, material, quantity, unit) AS (VALUES\n";
  // A material missing by name gives NULL, which fails NOT NULL: no entry is dropped silently.
  const bomTail = `)
INSERT INTO bill_of_materials (product_id, material_id, quantity, unit, created_at, updated_at)
SELECT p.id, (SELECT m.id FROM materials m WHERE m.name = v.material), v.quantity, v.unit, p.created_at, p.created_at
FROM v CROSS JOIN ${base} b JOIN products p ON p.id = b.base + v.k
WHERE true;`;

  const insertStatements = [
    // The same reservation as the API's creates (reserveIdsStatement): past both the block and the
    // highest id in use, so later creates never collide with these rows.
    `UPDATE id_blocks SET next_id = max(next_id, coalesce((SELECT max(id) FROM products), 0) + 1) + ${total} WHERE name = 'products';`,
    ...chunked(baseRows, baseHead, baseTail, maxStatementChars),
    ...chunked(componentRows, componentHead, componentTail, maxStatementChars),
    ...chunked(bomRows, bomHead, bomTail, maxStatementChars),
  ];

  return [
    ...starterStatements(),
    `INSERT INTO users (email, email_canonical, username, hashed_password, is_active, is_verified, profile_visibility)
VALUES (${sqlValue(DEMO_ACCOUNT.email)}, ${sqlValue(DEMO_ACCOUNT.email)}, ${sqlValue(DEMO_ACCOUNT.username)}, NULL, 1, 1, 'public')
ON CONFLICT DO NOTHING;`,
    // The demo contributor has accepted the contributor terms (version 1, the default), so dataset
    // releases include the demo products.
    `UPDATE users SET terms_accepted_version = 1, terms_accepted_at = unixepoch()
WHERE username = ${sqlValue(DEMO_ACCOUNT.username)} AND email = ${sqlValue(DEMO_ACCOUNT.email)} AND terms_accepted_version IS NULL;`,
    ...(reset ? [`DELETE FROM products WHERE owner_id = ${demoOwner};`] : []),
    ...(total === 0 ? [] : insertStatements),
  ];
}
