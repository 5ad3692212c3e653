/** The API reference (Markdown) docs/api.md carries, generated from the same schema as the CRD. */
import type * as z from "../zod.ts";
import { DynamoPoolRelaySpec, DynamoPoolRelayStatus } from "./dynamo-pool-relay.ts";
import { toOpenApi, type Schema } from "./openapi.ts";

function typeOf(s: Schema): string {
  if (s["x-kubernetes-int-or-string"]) return "int or string";
  if (s["type"] === "array") return `[]${typeOf((s["items"] ?? {}) as Schema)}`;
  // Only an object (a map) has a schema for its additional properties.
  if (s["additionalProperties"]) return `map[string]${typeOf(s["additionalProperties"] as Schema)}`;
  if (Array.isArray(s["enum"])) return (s["enum"] as string[]).join(" \\| ");
  return (s["type"] as string | undefined) ?? "object";
}

function rows(schema: Schema, prefix: string): string[] {
  const props = (schema["properties"] ?? {}) as Record<string, Schema>;
  const required = new Set((schema["required"] ?? []) as string[]);
  return Object.entries(props).flatMap(([key, s]) => {
    const path = `${prefix}.${key}`;
    const notes = [
      required.has(key) ? "required" : "",
      s["default"] !== undefined ? `default ${JSON.stringify(s["default"])}` : "",
    ]
      .filter(Boolean)
      .join(", ");
    const line = `| \`${path}\` | ${typeOf(s)} | ${notes} | ${((s["description"] as string | undefined) ?? "").replaceAll("|", "\\|")} |`;
    // The fields of an object that keeps unknown fields are not the API's; a schema without
    // properties has no rows.
    const nested = s["x-kubernetes-preserve-unknown-fields"] ? [] : rows(s, path);
    return [line, ...nested];
  });
}

/** The Markdown lines of one table: a heading, the schema's description, a row per field (nested fields dotted). */
export function referenceTable(prefix: string, schema: z.core.$ZodType): string[] {
  const openApi = toOpenApi(schema);
  return [
    `#### ${prefix}`,
    "",
    (openApi["description"] as string | undefined) ?? "",
    "",
    "| Field | Type | | Description |",
    "|---|---|---|---|",
    ...rows(openApi, prefix),
    "",
  ];
}

export function apiReference(): string {
  return [...referenceTable("spec", DynamoPoolRelaySpec), ...referenceTable("status", DynamoPoolRelayStatus)].join(
    "\n",
  );
}
