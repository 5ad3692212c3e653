import { describe, expect, it } from "vitest";
import { SeenVersions, childVersions } from "./seen-versions.ts";

const v = (kind: string, name: string, resourceVersion: string) => ({ kind, name, resourceVersion });

describe("childVersions", () => {
  it("takes kind, name and resourceVersion of each observed child, skipping absent ones and ones without a version", () => {
    const versions = childVersions([
      { kind: "ConfigMap", objects: [{ metadata: { name: "g1-pool-relay", resourceVersion: "10" } }] },
      { kind: "Deployment", objects: [undefined] },
      { kind: "Service", objects: [{ metadata: { name: "g1-pool-relay" } }] },
      { kind: "EndpointSlice", objects: [{ metadata: { name: "g1-pool-relay-a", resourceVersion: "11" } }, { metadata: { name: "g1-pool-relay-b", resourceVersion: "12" } }] },
    ]);
    expect(versions).toEqual([v("ConfigMap", "g1-pool-relay", "10"), v("EndpointSlice", "g1-pool-relay-a", "11"), v("EndpointSlice", "g1-pool-relay-b", "12")]);
  });
});

describe("SeenVersions", () => {
  it("knows the versions the last run for a key read, by kind and name, and nothing else", () => {
    const seen = new SeenVersions(10);
    seen.record("ns/a", [v("Deployment", "a-pool-relay", "5"), v("EndpointSlice", "a-pool-relay-x", "6")]);
    expect(seen.has("ns/a", v("Deployment", "a-pool-relay", "5"))).toBe(true);
    expect(seen.has("ns/a", v("EndpointSlice", "a-pool-relay-x", "6"))).toBe(true);
    expect(seen.has("ns/a", v("Deployment", "a-pool-relay", "7"))).toBe(false);
    expect(seen.has("ns/a", v("Service", "a-pool-relay", "5"))).toBe(false);
    expect(seen.has("ns/a", v("Deployment", "other", "5"))).toBe(false);
    expect(seen.has("ns/b", v("Deployment", "a-pool-relay", "5"))).toBe(false);
  });

  it("replaces a key's versions with the next run's: an older version is read again", () => {
    const seen = new SeenVersions(10);
    seen.record("ns/a", [v("Deployment", "a-pool-relay", "5")]);
    seen.record("ns/a", [v("Deployment", "a-pool-relay", "8")]);
    expect(seen.has("ns/a", v("Deployment", "a-pool-relay", "8"))).toBe(true);
    expect(seen.has("ns/a", v("Deployment", "a-pool-relay", "5"))).toBe(false);
  });

  it("forgets a key on request", () => {
    const seen = new SeenVersions(10);
    seen.record("ns/a", [v("Deployment", "a-pool-relay", "5")]);
    expect(seen.has("ns/a", v("Deployment", "a-pool-relay", "5"))).toBe(true);
    seen.forget("ns/a");
    expect(seen.has("ns/a", v("Deployment", "a-pool-relay", "5"))).toBe(false);
    expect(seen.size).toBe(0);
  });

  it("holds at most its capacity of keys, forgetting the least recently recorded first", () => {
    const seen = new SeenVersions(2);
    seen.record("ns/a", [v("Deployment", "a", "1")]);
    seen.record("ns/b", [v("Deployment", "b", "1")]);
    seen.record("ns/a", [v("Deployment", "a", "2")]);
    seen.record("ns/c", [v("Deployment", "c", "1")]);
    expect(seen.size).toBe(2);
    expect(seen.has("ns/a", v("Deployment", "a", "2"))).toBe(true);
    expect(seen.has("ns/c", v("Deployment", "c", "1"))).toBe(true);
    expect(seen.has("ns/b", v("Deployment", "b", "1"))).toBe(false);
  });
});
