import type { AppRouteHandler } from "../../../env";
import { pageEnvelope } from "../../../lib/pagination";
import { requireAdmin } from "../../../middleware/guards";
import * as adminUsers from "../../../services/accounts/admin-users";
import { toAdminUser } from "./admin-users.mappers";
import type * as routes from "./admin-users.routes";

export const listUsers: AppRouteHandler<typeof routes.listUsers> = async (c) => {
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

export const getUser: AppRouteHandler<typeof routes.getUser> = async (c) => {
  requireAdmin(c);
  return c.json(toAdminUser(await adminUsers.readUser(c.get("services"), c.req.valid("param").user_id)), 200);
};

export const updateUser: AppRouteHandler<typeof routes.updateUser> = async (c) => {
  const actor = requireAdmin(c);
  const svc = { db: c.get("services").db, log: c.get("log") };
  const user = await adminUsers.updateUser(svc, actor, c.req.valid("param").user_id, c.req.valid("json"));
  return c.json(toAdminUser(user), 200);
};

export const setRole: AppRouteHandler<typeof routes.setRole> = async (c) => {
  const actor = requireAdmin(c);
  const svc = { db: c.get("services").db, log: c.get("log") };
  const user = await adminUsers.setRole(svc, actor, c.req.valid("param").user_id, c.req.valid("json").role);
  return c.json(toAdminUser(user), 200);
};

export const resetMfa: AppRouteHandler<typeof routes.resetMfa> = async (c) => {
  const actor = requireAdmin(c);
  await adminUsers.resetMfa({ db: c.get("services").db, log: c.get("log") }, actor, c.req.valid("param").user_id);
  return c.body(null, 204);
};
