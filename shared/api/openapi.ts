/**
 * zod -> the structural OpenAPI v3 schema Kubernetes requires of a CRD. zod's own converter gives
 * OpenAPI 3.0; this pass rewrites what Kubernetes spells differently (unknown fields, int-or-string)
 * and drops what it forbids (additionalProperties: false, JSON-number bounds of z.int()).
 */
import * as z from "../zod.ts";

export type Schema = { [key: string]: unknown };

const SAFE = Number.MAX_SAFE_INTEGER;

function structural(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(structural);
  if (node === null || typeof node !== "object") return node;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node as Schema)) out[key] = structural(value);
  if (out["additionalProperties"] === false) delete out["additionalProperties"];
  const extra = out["additionalProperties"];
  if (typeof extra === "object" && Object.keys(extra as Schema).length === 0) {
    delete out["additionalProperties"];
    out["x-kubernetes-preserve-unknown-fields"] = true;
  }
  if (out["x-kubernetes-int-or-string"] === true) out["anyOf"] = [{ type: "integer" }, { type: "string" }];
  if (out["minimum"] === -SAFE) delete out["minimum"];
  if (out["maximum"] === SAFE) delete out["maximum"];
  return out;
}

export function toOpenApi(schema: z.core.$ZodType): Schema {
  // The openapi-3.0 target writes no $schema, which a CRD's schema must not have.
  return structural(z.toJSONSchema(schema, { target: "openapi-3.0", io: "input", unrepresentable: "throw" })) as Schema;
}
