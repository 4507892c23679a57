import { defineConfig } from "drizzle-kit";

// `npm run db:generate` writes flat SQL migrations that wrangler and the test pool apply in order.
export default defineConfig({
  dialect: "sqlite",
  // The core's tables, and each plugin's own beside its code.
  schema: ["./src/db/schema.ts", "./src/plugins/rpi-cam/schema.ts"],
  out: "./migrations",
});
