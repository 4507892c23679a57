import { createRoute, z } from "@hono/zod-openapi";
import { PageQuerySchema, pagedSchema } from "../../../lib/pagination";
import { problemResponses } from "../../../lib/problem";
import { cachedRead } from "../../../middleware/read-copies";
import { IdParamsSchema } from "../../../schemas/params";
import { DEFAULT_RECURSION_DEPTH, MAX_RECURSION_DEPTH, MAX_TREE_COMPONENTS } from "../../../services/products/component-tree";
import { ComponentSummarySchema } from "../products.schemas";

/** A component in a tree answer: its summary and its own components, nested the same way. */
export type ComponentTreeNode = z.infer<typeof ComponentSummarySchema> & { components: ComponentTreeNode[] };

export const ComponentTreeNodeSchema: z.ZodType<ComponentTreeNode> = ComponentSummarySchema.extend({
  get components() {
    return z.array(ComponentTreeNodeSchema).openapi({
      description: "Its components, ordered by id; empty at the requested depth (deeper levels are not read).",
    });
  },
}).openapi("ComponentTreeNode", { description: "A component with its components nested down to the requested depth." });

const ComponentPageSchema = pagedSchema(ComponentSummarySchema, "ComponentPage");

/** Query of the direct-components list: `page` and `size`, nothing else. */
export const ComponentPageQuerySchema = z.strictObject({ ...PageQuerySchema.shape });

/** Query of the tree: `recursion_depth`, 1..10, default 1 (the direct components without their children). */
export const ComponentTreeQuerySchema = z.strictObject({
  recursion_depth: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_RECURSION_DEPTH)
    .default(DEFAULT_RECURSION_DEPTH)
    .openapi({
      description:
        `Levels of components to nest, 1 to ${MAX_RECURSION_DEPTH}; default ${DEFAULT_RECURSION_DEPTH}: ` +
        "the direct components, each with `components: []`.",
      example: 3,
    }),
});

const VIEWER_DEPENDENT =
  "Public. Each component shows its owner only as far as the owner's profile visibility allows the viewer " +
  "(hence `Cache-Control: no-store`). Sends an `ETag` over the whole response and answers `If-None-Match` with 304.";

type Parent = "product" | "component";

const PARENTS = {
  product: { path: "/products/{id}", noun: "base product", other: "a component id", name: "Product" },
  component: { path: "/components/{id}", noun: "component", other: "a base product id", name: "Component" },
} as const;

function listRoute(parent: Parent) {
  const { path, noun, other, name } = PARENTS[parent];
  return createRoute({
    method: "get",
    path: `${path}/components` as `${(typeof PARENTS)[Parent]["path"]}/components`,
    operationId: `list${name}Components`,
    tags: ["Products"],
    summary: `List the direct components of a ${noun}`,
    description:
      `One page of the components directly under the ${noun}, ordered by id (${other}: 404); deeper levels through ` +
      `\`/components/tree\` or the components' own routes. ${VIEWER_DEPENDENT}`,
    middleware: [cachedRead("record")] as const,
    request: { params: IdParamsSchema, query: ComponentPageQuerySchema },
    responses: {
      200: { description: "A page of components.", content: { "application/json": { schema: ComponentPageSchema } } },
      304: { description: "Unchanged since the `If-None-Match` ETag." },
      ...problemResponses(404, 422, 503),
    },
  });
}

function treeRoute(parent: Parent) {
  const { path, noun, other, name } = PARENTS[parent];
  return createRoute({
    method: "get",
    path: `${path}/components/tree` as `${(typeof PARENTS)[Parent]["path"]}/components/tree`,
    operationId: `get${name}ComponentTree`,
    tags: ["Products"],
    summary: `Read the component tree of a ${noun}`,
    description:
      `The components under the ${noun} nested down to \`recursion_depth\` levels (1: the direct components), children ` +
      `ordered by id (${other}: 404). At most ${MAX_TREE_COMPONENTS.toLocaleString("en")} components in all: a larger tree ` +
      "within the depth is a 400 `COMPONENT_TREE_TOO_LARGE`; lower `recursion_depth`, page through `/components`, or " +
      `export the product. ${VIEWER_DEPENDENT}`,
    middleware: [cachedRead("record")] as const,
    request: { params: IdParamsSchema, query: ComponentTreeQuerySchema },
    responses: {
      200: {
        description: "The top-level components, each with its components nested.",
        content: { "application/json": { schema: z.array(ComponentTreeNodeSchema) } },
      },
      304: { description: "Unchanged since the `If-None-Match` ETag." },
      ...problemResponses(400, 404, 422, 503),
    },
  });
}

export const listProductComponents = listRoute("product");
export const listSubcomponents = listRoute("component");
export const getProductComponentTree = treeRoute("product");
export const getComponentTree = treeRoute("component");
