import { defineConfig } from "drizzle-kit";

// `npm run db:generate` writes flat SQL migrations that wrangler and the test pool apply in order.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/schema.ts",
  out: "./migrations",
});
