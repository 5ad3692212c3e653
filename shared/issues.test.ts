import { describe, expect, it } from "vitest";
import { dotPath, formatIssues } from "./issues.ts";
import * as z from "./zod.ts";

describe("dotPath", () => {
  it.each<{ name: string; path: PropertyKey[]; want: string }>([
    { name: "the root", path: [], want: "" },
    { name: "a field", path: ["spec"], want: "spec" },
    { name: "nested fields", path: ["spec", "relay", "image"], want: "spec.relay.image" },
    { name: "a list element's field", path: ["spec", "tolerations", 0, "key"], want: "spec.tolerations[0].key" },
    { name: "an element of a top-level list", path: [2], want: "[2]" },
    { name: "nested lists", path: ["matrix", 1, 3], want: "matrix[1][3]" },
  ])("writes $name as $want", ({ path, want }) => {
    expect(dotPath(path)).toBe(want);
  });
});

describe("formatIssues", () => {
  const Spec = z.object({
    name: z.string({ error: "must be a string" }),
    items: z.array(z.object({ key: z.string().check(z.minLength(1, "must not be empty")) })),
  });

  it("names every issue with its path, in one message", () => {
    const r = Spec.safeParse({ name: 1, items: [{ key: "a" }, { key: "" }] });
    expect(r.success).toBe(false);
    expect(formatIssues(r.error!, "DynamoPoolRelay n/g")).toBe(
      "DynamoPoolRelay n/g is invalid: name: must be a string; items[1].key: must not be empty",
    );
  });

  it("gives an issue of the value itself without a path", () => {
    const r = z.object({}, { error: "must be an object" }).safeParse("text");
    expect(r.success).toBe(false);
    expect(formatIssues(r.error!, "the data")).toBe("the data is invalid: must be an object");
  });
});
