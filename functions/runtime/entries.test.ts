// The four entry points (functions/*/index.ts): each registers its function with the Functions
// Framework under the name its Knative Service's FUNCTION_TARGET gives, served by serve() under
// that name, and the functions that read the API server export preconnect.
import { getFunction } from "@google-cloud/functions-framework/testing";
import { afterEach, describe, expect, it, vi } from "vitest";

afterEach(() => vi.restoreAllMocks());

describe.each([
  { name: "apply", load: () => import("../apply/index.ts"), reads: true },
  { name: "status", load: () => import("../status/index.ts"), reads: true },
  { name: "eligibility", load: () => import("../eligibility/index.ts"), reads: true },
  { name: "dead-letter", load: () => import("../dead-letter/index.ts"), reads: false },
])("the $name entry point", ({ name, load, reads }) => {
  it(`registers ${name}, which logs under that name`, async () => {
    const entry: Record<string, unknown> = await load();
    const fn = getFunction(name) as ((req: unknown, res: unknown) => Promise<void>) | undefined;
    expect(fn).toBeTypeOf("function");
    const lines: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
    const res = { status: () => res, set: () => res, send: () => undefined, end: () => undefined };
    await fn!({ method: "GET", headers: {} }, res);
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ function: name, status: 400, error: `${name} accepts CloudEvents by POST, got GET` });
    expect(typeof entry["preconnect"]).toBe(reads ? "function" : "undefined");
  });
});
