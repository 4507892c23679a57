import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { pageEnvelope } from "../../../lib/pagination";
import { requireAdmin } from "../../../middleware/guards";
import * as adminUsers from "../../../services/admin-users";
import { toAdminUser } from "./admin-users.mappers";
import type * as routes from "./admin-users.routes";

export const listUsers: RouteHandler<typeof routes.listUsers, AppEnv> = async (c) => {
  requireAdmin(c);
  const { page, size, search, role, is_active, is_superuser } = c.req.valid("query");
  const filter: adminUsers.AdminUserFilter = {
    ...(search !== undefined && { search }),
    ...(role !== undefined && { role }),
    ...(is_active !== undefined && { isActive: is_active }),
    ...(is_superuser !== undefined && { isSuperuser: is_superuser }),
  };
  const { users, total } = await adminUsers.listUsers(c.get("services"), filter, { page, size });
  return c.json(pageEnvelope(users.map(toAdminUser), total, { page, size }), 200);
};

export const getUser: RouteHandler<typeof routes.getUser, AppEnv> = async (c) => {
  requireAdmin(c);
  return c.json(toAdminUser(await adminUsers.readUser(c.get("services"), c.req.valid("param").user_id)), 200);
};

export const updateUser: RouteHandler<typeof routes.updateUser, AppEnv> = async (c) => {
  const actor = requireAdmin(c);
  const svc = { db: c.get("services").db, log: c.get("log") };
  const user = await adminUsers.updateUser(svc, actor, c.req.valid("param").user_id, c.req.valid("json"));
  return c.json(toAdminUser(user), 200);
};

export const setRole: RouteHandler<typeof routes.setRole, AppEnv> = async (c) => {
  const actor = requireAdmin(c);
  const svc = { db: c.get("services").db, log: c.get("log") };
  const user = await adminUsers.setRole(svc, actor, c.req.valid("param").user_id, c.req.valid("json").role);
  return c.json(toAdminUser(user), 200);
};

export const resetMfa: RouteHandler<typeof routes.resetMfa, AppEnv> = async (c) => {
  const actor = requireAdmin(c);
  await adminUsers.resetMfa({ db: c.get("services").db, log: c.get("log") }, actor, c.req.valid("param").user_id);
  return c.body(null, 204);
};
