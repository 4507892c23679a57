import { ApiError, type FieldError } from "../lib/problem";

// The last line of defence behind request validation: a write that a table's own constraint
// refuses is the client's request breaking a rule of the data (or losing a race), never a server
// fault. The services map the failures they expect to their own codes; whatever still reaches
// the error handler is answered here: 409 for uniqueness, 422 for the rest, pointing at the
// member where the constraint names one. A refusal here means validation missed a rule, so the
// error handler also logs it.

/** A constraint failure as SQLite words it: the kind, and the constraint or columns it names. */
export interface ConstraintFailure {
  kind: "UNIQUE" | "CHECK" | "NOT NULL" | "FOREIGN KEY";
  /** `products_name_length` for a CHECK, `table.column` (comma-separated) for UNIQUE and NOT NULL; empty for FOREIGN KEY. */
  target: string;
}

/** The body member each named CHECK constraint guards. */
const CHECK_POINTERS: Record<string, string> = {
  products_name_length: "/name",
  products_component_amount: "/amount_in_parent",
  bill_of_materials_quantity: "/quantity",
  materials_density_positive: "/density_kg_m3",
  users_role_check: "/role",
  users_superuser_is_lab: "/role",
  users_profile_visibility_check: "/preferences/profile_visibility",
};

/** Columns that are body members of the same name wherever a client writes them. */
const MEMBER_COLUMNS = new Set([
  "name",
  "description",
  "brand",
  "model",
  "url",
  "title",
  "username",
  "email",
  "external_id",
  "version",
  "source",
  "quantity",
  "unit",
  "amount_in_parent",
  "material_id",
  "product_type_id",
]);

const FAILURE = /\b(UNIQUE|CHECK|NOT NULL|FOREIGN KEY) constraint failed(?:: ([\w.]+(?:, [\w.]+)*))?/;

/** The constraint failure behind `error` (D1's error, or a query error wrapping it as `cause`), or null. */
export function constraintFailure(error: unknown): ConstraintFailure | null {
  let current: unknown = error;
  for (let hops = 0; hops < 5 && current instanceof Error; hops++) {
    const match = FAILURE.exec(current.message);
    if (match) {
      const target = match[2] && !match[2].startsWith("SQLITE_") ? match[2] : "";
      return { kind: match[1] as ConstraintFailure["kind"], target };
    }
    current = current.cause;
  }
  return null;
}

/**
 * Whether `error` is a constraint failure of one of `kinds` and, when `target` is given, one that
 * names it: a CHECK constraint's name; for UNIQUE and NOT NULL a `table.column` of the failure or
 * a whole `table` (any of its columns), or the exact column list (`table.a, table.b`). The one
 * place that reads SQLite's error text: services ask this instead of matching messages.
 */
export function isConstraintFailure(
  error: unknown,
  kinds: ConstraintFailure["kind"] | readonly ConstraintFailure["kind"][],
  target?: string,
): boolean {
  const failure = constraintFailure(error);
  if (failure === null || !(typeof kinds === "string" ? [kinds] : kinds).includes(failure.kind)) return false;
  if (target === undefined || failure.target === target) return true;
  if (failure.kind === "CHECK") return false;
  return failure.target.split(", ").some((column) => column === target || column.startsWith(`${target}.`));
}

/** The members a failure names: the guarded member of a CHECK, the member columns of UNIQUE and NOT NULL. */
function pointersOf(failure: ConstraintFailure): string[] {
  if (failure.kind === "CHECK") {
    const pointer = CHECK_POINTERS[failure.target];
    return pointer ? [pointer] : [];
  }
  return failure.target
    .split(", ")
    .map((qualified) => qualified.slice(qualified.lastIndexOf(".") + 1))
    .filter((column) => MEMBER_COLUMNS.has(column))
    .map((column) => `/${column}`);
}

const DETAIL: Record<ConstraintFailure["kind"], string> = {
  UNIQUE: "Another record already has this value.",
  CHECK: "The value breaks a rule of the stored data.",
  "NOT NULL": "A value is required here.",
  "FOREIGN KEY": "A record this request refers to does not exist, or one it removes is still referred to.",
};

/** The client error for a constraint failure: 409 `ALREADY_EXISTS` for uniqueness, otherwise 422 `VALIDATION_FAILED`. */
export function constraintError(failure: ConstraintFailure): ApiError {
  const pointers = pointersOf(failure);
  const entries = (list: string[]): FieldError[] => list.map((pointer) => ({ pointer, detail: DETAIL[failure.kind] }));
  if (failure.kind === "UNIQUE") {
    return new ApiError(409, {
      code: "ALREADY_EXISTS",
      detail: "Another record already has a value this request sets; choose another one, or read the records again.",
      ...(pointers.length > 0 && { errors: entries(pointers) }),
    });
  }
  // A 422 always says where; the whole body when the constraint names no member.
  return new ApiError(422, {
    code: "VALIDATION_FAILED",
    detail: "The request did not pass validation.",
    errors: entries(pointers.length > 0 ? pointers : [""]),
  });
}
