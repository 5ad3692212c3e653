import { describe, expect, it } from "vitest";
import { connectionRevision, stableJson } from "./connection-revision.ts";

const base = { clusterID: "dc-1", image: "relay:1", env: [{ name: "A", value: "1" }] };

describe("connectionRevision", () => {
  it("is a lowercase hex SHA-256", () => {
    expect(connectionRevision(base)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("is the same for the same settings", () => {
    expect(connectionRevision({ ...base, env: [{ name: "A", value: "1" }] })).toBe(connectionRevision(base));
  });

  it("treats no env and an empty env alike", () => {
    expect(connectionRevision({ clusterID: "dc-1", image: "relay:1" })).toBe(connectionRevision({ clusterID: "dc-1", image: "relay:1", env: [] }));
  });

  it.each([
    { name: "cluster ID", change: { clusterID: "dc-2" } },
    { name: "image", change: { image: "relay:2" } },
    { name: "env value", change: { env: [{ name: "A", value: "2" }] } },
    { name: "env order", change: { env: [{ name: "B", value: "2" }, { name: "A", value: "1" }] } },
  ])("changes with the $name", ({ change }) => {
    const reordered = change.env?.length === 2 ? { ...base, env: [{ name: "A", value: "1" }, { name: "B", value: "2" }] } : base;
    expect(connectionRevision({ ...reordered, ...change })).not.toBe(connectionRevision(reordered));
  });
});

describe("stableJson", () => {
  it("sorts object keys at every depth, keeps array order and drops undefined", () => {
    expect(stableJson({ b: 1, a: [{ d: 1, c: undefined, b: "x" }, 2] })).toBe('{"a":[{"b":"x","d":1},2],"b":1}');
  });
});
