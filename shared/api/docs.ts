/** The API reference (Markdown) the README carries, generated from the same schema as the CRD. */
import { DynamoPoolRelaySpec, DynamoPoolRelayStatus } from "./dynamo-pool-relay.ts";
import { toOpenApi, type Schema } from "./openapi.ts";

function typeOf(s: Schema): string {
  if (s["x-kubernetes-int-or-string"]) return "int or string";
  if (s["type"] === "array") return `[]${typeOf((s["items"] ?? {}) as Schema)}`;
  if (s["type"] === "object" && s["additionalProperties"]) return `map[string]${typeOf(s["additionalProperties"] as Schema)}`;
  if (Array.isArray(s["enum"])) return (s["enum"] as string[]).join(" \\| ");
  return String(s["type"] ?? "object");
}

function rows(schema: Schema, prefix: string): string[] {
  const props = (schema["properties"] ?? {}) as Record<string, Schema>;
  const required = new Set((schema["required"] ?? []) as string[]);
  return Object.entries(props).flatMap(([key, s]) => {
    const path = `${prefix}.${key}`;
    const notes = [required.has(key) ? "required" : "", s["default"] !== undefined ? `default ${JSON.stringify(s["default"])}` : ""]
      .filter(Boolean)
      .join(", ");
    const line = `| \`${path}\` | ${typeOf(s)} | ${notes} | ${String(s["description"] ?? "").replaceAll("|", "\\|")} |`;
    const nested = s["type"] === "object" && s["properties"] && !s["x-kubernetes-preserve-unknown-fields"] ? rows(s, path) : [];
    return [line, ...nested];
  });
}

export function apiReference(): string {
  const table = (title: string, schema: Schema, prefix: string) => [
    `#### ${title}`,
    "",
    String(schema["description"] ?? ""),
    "",
    "| Field | Type | | Description |",
    "|---|---|---|---|",
    ...rows(schema, prefix),
    "",
  ];
  return [
    ...table("spec", toOpenApi(DynamoPoolRelaySpec), "spec"),
    ...table("status", toOpenApi(DynamoPoolRelayStatus), "status"),
  ].join("\n");
}
