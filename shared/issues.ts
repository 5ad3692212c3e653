/**
 * zod issues as one readable message: every problem, each with its dotted field path, so a user
 * fixes them all in one go.
 */
import type * as z from "./zod.ts";

export function dotPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, key) => {
    if (typeof key === "number") return `${acc}[${key}]`;
    return acc === "" ? String(key) : `${acc}.${String(key)}`;
  }, "");
}

export function formatIssues(error: z.core.$ZodError, subject: string): string {
  const parts = error.issues.map((issue) => {
    const path = dotPath(issue.path);
    return path === "" ? issue.message : `${path}: ${issue.message}`;
  });
  return `${subject} is invalid: ${parts.join("; ")}`;
}
