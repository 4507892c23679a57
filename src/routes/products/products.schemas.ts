import { z } from "@hono/zod-openapi";
import { FREE_FORM_JSON_RULE, freeFormObject } from "../../lib/json-bounds";
import { multilineText, oneLine, singleLineText } from "../../lib/text";
import { FileSchema, ImageSchema, TimestampSchema, VideoSchema } from "../../schemas/media";
import { MAX_BOM_ENTRIES } from "../../services/products/bill-of-materials";
import { type ComponentCreate, MAX_COMPONENT_DEPTH, MAX_COMPONENTS_PER_LEVEL, type ProductCreate } from "../../services/products/create";
import { UNIT_CODES } from "../../services/products/fields";
import { MAX_VIDEOS, type VideoValues } from "../../services/products/videos";

const positive = (description: string) => z.number().positive().max(1e9).nullable().optional().openapi({ description });

const CircularitySchema = z
  .strictObject({
    recyclability: multilineText().max(1000).nullable().optional(),
    disassemblability: multilineText().max(1000).nullable().optional(),
    remanufacturability: multilineText().max(1000).nullable().optional(),
  })
  .nullable()
  .openapi("CircularityProperties", {
    description: "Notes on circularity; an empty object and empty strings are stored as null.",
    example: { recyclability: "Housing is PP, clip-fit, easy to separate.", disassemblability: null, remanufacturability: null },
  });

/** The fields a base product and a component share, as a client writes them. */
const recordFields = {
  name: singleLineText().trim().min(2).max(100).openapi({ example: "Coffee grinder" }),
  description: multilineText().max(500).nullable().optional(),
  brand: singleLineText().trim().max(100).nullable().optional().openapi({ description: "Stored lower-case.", example: "krups" }),
  model: singleLineText().trim().max(100).nullable().optional().openapi({ example: "GVX2" }),
  weight_g: positive("Mass in grams, > 0."),
  height_cm: positive("Height in centimetres, > 0."),
  width_cm: positive("Width in centimetres, > 0."),
  depth_cm: positive("Depth in centimetres, > 0."),
  circularity_properties: CircularitySchema.optional(),
  product_type_id: z.number().int().positive().nullable().optional(),
};

export const BomEntryInputSchema = z
  .strictObject({
    material_id: z.number().int().positive(),
    quantity: z.number().positive().max(1e6).openapi({ description: "> 0 and at most 1,000,000." }),
    unit: z.enum(UNIT_CODES).default("kg"),
  })
  .openapi("BillOfMaterialsEntryInput", { example: { material_id: 3, quantity: 0.25, unit: "kg" } });

const BomInputSchema = z
  .array(BomEntryInputSchema)
  .max(MAX_BOM_ENTRIES)
  .refine((entries) => new Set(entries.map((entry) => entry.material_id)).size === entries.length, {
    message: "Each material may appear once per record.",
  });

export const VideoInputSchema = z
  .strictObject({
    url: oneLine(z.url({ protocol: /^https$/ }).max(2000)),
    title: singleLineText().max(200).nullable().optional(),
    description: multilineText().max(1000).nullable().optional(),
    video_metadata: freeFormObject()
      .nullable()
      .optional()
      .openapi({ description: `Free-form JSON object. ${FREE_FORM_JSON_RULE}` }),
  })
  .openapi("VideoInput", {
    example: { url: "https://www.youtube.com/watch?v=abc123", title: "Teardown" },
  }) satisfies z.ZodType<VideoValues>;

export const ComponentCreateSchema: z.ZodType<ComponentCreate> = z
  .strictObject({
    ...recordFields,
    amount_in_parent: z.number().int().min(1).max(1000).openapi({ description: "How many of this component the parent holds, 1 to 1000." }),
    get components() {
      return z.array(ComponentCreateSchema).max(MAX_COMPONENTS_PER_LEVEL).optional();
    },
    bill_of_materials: BomInputSchema.optional(),
  })
  .openapi("ComponentCreate", {
    description: `A component; \`components\` nest further (at most ${MAX_COMPONENT_DEPTH} levels below the base product, ${MAX_COMPONENTS_PER_LEVEL} per level).`,
    example: { name: "Burr set", amount_in_parent: 1, components: [], bill_of_materials: [{ material_id: 3, quantity: 0.12, unit: "kg" }] },
  });

export const ProductCreateSchema = z
  .strictObject({
    ...recordFields,
    components: z.array(ComponentCreateSchema).max(MAX_COMPONENTS_PER_LEVEL).optional(),
    bill_of_materials: BomInputSchema.optional(),
    videos: z.array(VideoInputSchema).max(MAX_VIDEOS).optional(),
  })
  .openapi("ProductCreate", {
    example: {
      name: "Coffee grinder",
      brand: "Krups",
      model: "GVX2",
      weight_g: 1450,
      components: [{ name: "Motor", amount_in_parent: 1 }],
      bill_of_materials: [{ material_id: 1, quantity: 0.4, unit: "kg" }],
    },
  }) satisfies z.ZodType<ProductCreate>;

const updateFields = {
  name: recordFields.name.optional(),
  description: recordFields.description,
  brand: recordFields.brand,
  model: recordFields.model,
  weight_g: recordFields.weight_g,
  height_cm: recordFields.height_cm,
  width_cm: recordFields.width_cm,
  depth_cm: recordFields.depth_cm,
  circularity_properties: recordFields.circularity_properties,
  product_type_id: recordFields.product_type_id,
};

export const ProductUpdateSchema = z.strictObject(updateFields).openapi("ProductUpdate", { example: { weight_g: 1480 } });

export const ComponentUpdateSchema = z
  .strictObject({ ...updateFields, amount_in_parent: z.number().int().min(1).max(1000).optional() })
  .openapi("ComponentUpdate", { example: { amount_in_parent: 2 } });

export type RecordUpdate = z.infer<typeof ComponentUpdateSchema>;

const timestamp = TimestampSchema;

const summaryFields = {
  id: z.number().int(),
  name: z.string(),
  description: z.string().nullable(),
  brand: z.string().nullable(),
  model: z.string().nullable(),
  weight_g: z.number().nullable(),
  height_cm: z.number().nullable(),
  width_cm: z.number().nullable(),
  depth_cm: z.number().nullable(),
  volume_cm3: z.number().nullable().openapi({ description: "height × width × depth, when all three are known." }),
  circularity_properties: CircularitySchema,
  product_type_id: z.number().int().nullable(),
  version: z.number().int().openapi({ description: "Send it quoted in `If-Match` to PATCH this record." }),
  owner_id: z.number().int().nullable().openapi({ description: "Null when the owner's profile is hidden from you." }),
  owner_username: z.string().nullable().openapi({ description: "Null when the owner's profile is hidden from you." }),
  created_at: timestamp,
  updated_at: timestamp,
  thumbnail_url: z.string().nullable().openapi({ description: "The first image's thumbnail, when the record has images." }),
  quality_score: z
    .number()
    .min(0)
    .max(1)
    .openapi({
      description:
        "Share of the record's applicable quality checks that pass (0 to 1, 3 decimals; 1 when none applies), current with every write: " +
        "the checks and what fails are at `/quality` (docs/quality.md). Filter with `quality_score[lt]`, `quality_score[ge]`, `quality_fail[in]`.",
      example: 0.714,
    }),
};

export const ProductSummarySchema = z.object(summaryFields).openapi("ProductSummary");

export const ComponentSummarySchema = z
  .object({ ...summaryFields, parent_id: z.number().int(), amount_in_parent: z.number().int() })
  .openapi("ComponentSummary");

export const BomEntrySchema = z
  .object({ material_id: z.number().int(), material_name: z.string(), quantity: z.number(), unit: z.enum(UNIT_CODES) })
  .openapi("BillOfMaterialsEntry", { example: { material_id: 3, material_name: "Polypropylene", quantity: 0.25, unit: "kg" } });

const ProductTypeRefSchema = z.object({ id: z.number().int(), name: z.string() }).nullable().openapi("ProductTypeRef");

const detailEmbeds = {
  product_type: ProductTypeRefSchema,
  images: z.array(ImageSchema).openapi({
    description:
      "Images of the record, oldest first: the clean ones; to its owner and a moderator also pending and rejected ones, with `status`.",
  }),
  files: z.array(FileSchema).openapi({
    description:
      "Research files of the record, oldest first: the clean ones; to its owner and a moderator also pending and rejected ones, with `status`.",
  }),
  bill_of_materials: z.array(BomEntrySchema),
  components: z.array(ComponentSummarySchema).openapi({ description: "Direct components; deeper levels via the tree route." }),
};

export const ProductDetailSchema = z.object({ ...summaryFields, ...detailEmbeds, videos: z.array(VideoSchema) }).openapi("ProductDetail");

export const ComponentDetailSchema = z
  .object({ ...summaryFields, parent_id: z.number().int(), amount_in_parent: z.number().int(), ...detailEmbeds })
  .openapi("ComponentDetail");
