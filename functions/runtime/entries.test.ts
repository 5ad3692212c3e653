// The four entry points (functions/*/index.ts): each registers its function with the Functions
// Framework under the name its Knative Service's FUNCTION_TARGET gives, served by serve() under
// that name, and the functions that read the API server export preconnect.
import { getFunction } from "@google-cloud/functions-framework/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
// Loaded with the file, as the entry point loads a bundle: what they do at load is the registration.
import * as applyEntry from "../apply/index.ts";
import * as deadLetterEntry from "../dead-letter/index.ts";
import * as eligibilityEntry from "../eligibility/index.ts";
import * as statusEntry from "../status/index.ts";

afterEach(() => vi.restoreAllMocks());

describe.each<{ name: string; entry: Record<string, unknown>; reads: boolean }>([
  { name: "apply", entry: applyEntry, reads: true },
  { name: "status", entry: statusEntry, reads: true },
  { name: "eligibility", entry: eligibilityEntry, reads: true },
  { name: "dead-letter", entry: deadLetterEntry, reads: false },
])("the $name entry point", ({ name, entry, reads }) => {
  it(`registers ${name}, which logs under that name`, async () => {
    const fn = getFunction(name) as ((req: unknown, res: unknown) => Promise<void>) | undefined;
    expect(fn).toBeTypeOf("function");
    const lines: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation(
      (chunk: string | Uint8Array) => (lines.push(String(chunk)), true),
    );
    const res = { status: () => res, set: () => res, send: () => undefined, end: () => undefined };
    await fn!({ method: "GET", headers: {} }, res);
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({
      function: name,
      status: 400,
      error: `${name} accepts CloudEvents by POST, got GET`,
    });
    expect(typeof entry["preconnect"]).toBe(reads ? "function" : "undefined");
  });
});
