/**
 * The API server's words for a DynamoPoolRelay it refuses, from the zod issues of the schema the
 * CRD is generated from, so `poolrelay render` reports a bad spec as `kubectl apply` would. The
 * wording is kube-apiserver's (its OpenAPI schema validator and CEL rules), as a real one answers
 * (test/integration/crd.test.ts pins the same strings). Its extra notes are left out: "some
 * validation rules were not checked" and the scale subresource's second copy of a replicas error.
 */
import type * as z from "../zod.ts";
import { dotPath } from "../issues.ts";

/** Marks an issue raised by a refinement that the CRD states as a CEL rule with this very message. */
export const CEL = { cel: true } as const;

/** Marks an issue raised by a refinement that the CRD states as a map's maxProperties. */
export const tooMany = (count: number, max: number) => ({ tooMany: { count, max } }) as const;

type Issue = z.core.$ZodIssue & { input?: unknown };

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

const OPENAPI_TYPE: Record<string, string> = {
  int: "integer",
  number: "integer",
  string: "string",
  boolean: "boolean",
  array: "array",
  object: "object",
  record: "object",
};

const quoted = (value: unknown) => JSON.stringify(value);

function fieldMessage(issue: Issue): string {
  const path = dotPath(issue.path);
  const at = path === "" ? "<nil>" : path;
  const input = issue.input;
  switch (issue.code) {
    case "invalid_type":
      if (input === undefined) return `${at}: Required value`;
      return `${at}: Invalid value: ${quoted(jsonType(input))}: ${at} in body must be of type ${OPENAPI_TYPE[issue.expected] ?? issue.expected}: ${quoted(jsonType(input))}`;
    case "too_small":
      if (issue.origin === "string")
        return `${at}: Invalid value: ${quoted(input)}: ${at} in body should be at least ${issue.minimum} chars long`;
      if (issue.origin === "array")
        return `${at}: Invalid value: ${(input as unknown[]).length}: ${at} in body should have at least ${issue.minimum} items`;
      return `${at}: Invalid value: ${quoted(input)}: ${at} in body should be greater than or equal to ${issue.minimum}`;
    case "too_big":
      if (issue.origin === "string") return `${at}: Too long: may not be more than ${issue.maximum} bytes`;
      if (issue.origin === "array")
        return `${at}: Too many: ${(input as unknown[]).length}: must have at most ${issue.maximum} items`;
      return `${at}: Invalid value: ${quoted(input)}: ${at} in body should be less than or equal to ${issue.maximum}`;
    case "invalid_format":
      if (issue.format === "regex" && issue.pattern)
        return `${at}: Invalid value: ${quoted(input)}: ${at} in body should match '${issue.pattern.replace(/^\/(.*)\/[a-z]*$/, "$1")}'`;
      return `${at}: Invalid value: ${quoted(input)}: ${issue.message}`;
    case "invalid_value":
      return `${at}: Unsupported value: ${quoted(input)}: supported values: ${issue.values.map(quoted).join(", ")}`;
    default: {
      const many =
        issue.code === "custom"
          ? (issue.params as Partial<ReturnType<typeof tooMany>> | undefined)?.tooMany
          : undefined;
      if (many) return `${at}: Too many: ${many.count}: must have at most ${many.max} items`;
      return `${at}: Invalid value: ${issue.message}`;
    }
  }
}

/** The API server's string validator stops at its first failure, checked in this order. */
function stringRank(issue: Issue): number | undefined {
  if (issue.code === "too_big" && issue.origin === "string") return 0;
  if (issue.code === "too_small" && issue.origin === "string") return 1;
  if (issue.code === "invalid_format") return 2;
  return undefined;
}

function firstStringFailure(issues: readonly Issue[]): Issue[] {
  const best = new Map<string, Issue>();
  for (const issue of issues) {
    const rank = stringRank(issue);
    if (rank === undefined) continue;
    const path = dotPath(issue.path);
    const kept = best.get(path);
    if (!kept || rank < stringRank(kept)!) best.set(path, issue);
  }
  return issues.filter((i) => stringRank(i) === undefined || best.get(dotPath(i.path)) === i);
}

const isCel = (issue: Issue) =>
  issue.code === "custom" && (issue.params as { cel?: boolean } | undefined)?.cel === true;

/**
 * The API server's answer to creating the object. Parse with `{ reportInput: true }`: the
 * messages quote the refused values. Like the API server, CEL rules are reported only when the
 * object passed the schema.
 */
export function admissionMessage(error: z.core.$ZodError, name: string): string {
  const issues = error.issues as Issue[];
  const schema = firstStringFailure(issues.filter((i) => !isCel(i)));
  const messages = (schema.length > 0 ? schema : issues).map(fieldMessage);
  return `DynamoPoolRelay.nvidia.com ${quoted(name)} is invalid: ${messages.length === 1 ? messages[0] : `[${messages.join(", ")}]`}`;
}
