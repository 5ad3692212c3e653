import { describe, expect, it } from "vitest";
import { SeenVersions, childVersions, statusDigest } from "./seen-versions.ts";

const v = (kind: string, name: string, digest: string) => ({ kind, name, digest });

/** A Deployment as a GET returns it, after its controller acted. */
const deployment = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: {
    name: "g1-pool-relay",
    namespace: "team-a",
    generation: 2,
    resourceVersion: "500",
    labels: { a: "b" },
    managedFields: [{ manager: "kube-controller-manager", time: "2026-01-01T00:00:00Z" }],
  },
  spec: { replicas: 2, template: { metadata: { annotations: { rev: "r1" } } } },
  status: {
    observedGeneration: 2,
    replicas: 2,
    updatedReplicas: 2,
    readyReplicas: 1,
    availableReplicas: 1,
    conditions: [{ type: "Progressing", status: "True", lastUpdateTime: "2026-01-01T00:00:01Z" }],
  },
};

describe("statusDigest", () => {
  const digest = (o: Record<string, unknown>) => statusDigest("Deployment", o);
  const base = digest(deployment);
  const edit = (f: (d: typeof deployment) => void) => {
    const d = structuredClone(deployment);
    f(d);
    return digest(d);
  };

  it("is the same for the server's bookkeeping, a LIST item without apiVersion and kind, and a Deployment's conditions", () => {
    expect(edit((d) => (d.metadata.resourceVersion = "501"))).toBe(base);
    expect(edit((d) => (d.metadata.managedFields = []))).toBe(base);
    expect(edit((d) => (d.status.conditions[0]!.lastUpdateTime = "2026-01-01T00:00:09Z"))).toBe(base);
    const { apiVersion: _a, kind: _k, ...item } = deployment;
    expect(digest(item)).toBe(base);
  });

  it.each([
    ["the generation", (d: typeof deployment) => (d.metadata.generation = 3)],
    ["a label", (d: typeof deployment) => (d.metadata.labels.a = "c")],
    ["the spec", (d: typeof deployment) => (d.spec.template.metadata.annotations.rev = "r2")],
    ["observedGeneration", (d: typeof deployment) => (d.status.observedGeneration = 1)],
    ["replicas", (d: typeof deployment) => (d.status.replicas = 3)],
    [
      "updatedReplicas, so that no current replica is available",
      (d: typeof deployment) => (d.status.updatedReplicas = 1),
    ],
    ["readyReplicas", (d: typeof deployment) => (d.status.readyReplicas = 2)],
    ["availableReplicas, so that no replica is", (d: typeof deployment) => (d.status.availableReplicas = 0)],
    ["observedGeneration, now behind the generation", (d: typeof deployment) => (d.status.observedGeneration = 1)],
  ])("differs when %s differs", (_, f) => {
    expect(edit(f)).not.toBe(base);
  });

  it("is the same when only counts status does not show move: a second replica available, a current replica among others", () => {
    expect(edit((d) => (d.status.availableReplicas = 2))).toBe(base);
    expect(edit((d) => ((d.status.updatedReplicas = 1), (d.status.availableReplicas = 2)))).toBe(base);
  });

  it("takes the whole status of other kinds", () => {
    const service = { metadata: { name: "s" }, spec: {}, status: { loadBalancer: {} } };
    expect(
      statusDigest("Service", { ...service, status: { loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } } }),
    ).not.toBe(statusDigest("Service", service));
    expect(statusDigest("Service", service)).not.toBe(statusDigest("Deployment", service));
  });

  it("takes an EndpointSlice's ready endpoints and its metadata, not its addresses, ports or generation", () => {
    const slice = {
      metadata: { name: "x", generation: 1, labels: { "kubernetes.io/service-name": "g1-pool-relay" } },
      addressType: "IPv4",
      ports: [{ port: 5561 }],
      endpoints: [{ addresses: ["10.0.0.1"], conditions: { ready: false } }],
    };
    const base = statusDigest("EndpointSlice", slice);
    expect(
      statusDigest("EndpointSlice", {
        ...slice,
        endpoints: [{ addresses: ["10.0.0.1"], conditions: { ready: true } }],
      }),
    ).not.toBe(base);
    expect(
      statusDigest("EndpointSlice", { ...slice, endpoints: [...slice.endpoints, { addresses: ["10.0.0.2"] }] }),
    ).not.toBe(base);
    expect(statusDigest("EndpointSlice", { ...slice, metadata: { ...slice.metadata, labels: {} } })).not.toBe(base);
    expect(
      statusDigest("EndpointSlice", {
        ...slice,
        metadata: { ...slice.metadata, generation: 2 },
        ports: [],
        endpoints: [{ addresses: ["10.0.0.9"], conditions: { ready: false } }],
      }),
    ).toBe(base);
  });
});

describe("childVersions", () => {
  it("takes kind, name and digest of each observed child, skipping absent ones", () => {
    const cm = { metadata: { name: "g1-pool-relay", resourceVersion: "10" }, data: { a: "1" } };
    const versions = childVersions([
      { kind: "ConfigMap", objects: [cm] },
      { kind: "Deployment", objects: [undefined] },
      {
        kind: "EndpointSlice",
        objects: [{ metadata: { name: "g1-pool-relay-a" } }, { metadata: { name: "g1-pool-relay-b" } }],
      },
    ]);
    expect(versions.map((x) => `${x.kind}/${x.name}`)).toEqual([
      "ConfigMap/g1-pool-relay",
      "EndpointSlice/g1-pool-relay-a",
      "EndpointSlice/g1-pool-relay-b",
    ]);
    expect(versions[0]).toEqual({
      kind: "ConfigMap",
      name: "g1-pool-relay",
      digest: statusDigest("ConfigMap", cm),
      resourceVersion: "10",
    });
    expect(versions[1]).toEqual({
      kind: "EndpointSlice",
      name: "g1-pool-relay-a",
      digest: statusDigest("EndpointSlice", { metadata: { name: "g1-pool-relay-a" } }),
    });
  });
});

describe("SeenVersions", () => {
  const at = (kind: string, name: string, digest: string, resourceVersion: string) => ({
    ...v(kind, name, digest),
    resourceVersion,
  });

  it("knows what the last run for a key read, by kind and name, and nothing else", () => {
    const seen = new SeenVersions(10);
    seen.record(
      "ns/a",
      [at("Deployment", "a-pool-relay", "d5", "105"), at("EndpointSlice", "a-pool-relay-x", "d6", "106")],
      ["Deployment", "Service", "EndpointSlice"],
      "200",
    );
    expect(seen.seen("ns/a", at("Deployment", "a-pool-relay", "d5", "105"))).toBe("same");
    expect(seen.seen("ns/a", at("EndpointSlice", "a-pool-relay-x", "d6", "106"))).toBe("same");
    expect(seen.seen("ns/a", at("Deployment", "a-pool-relay", "d7", "105"))).toBeUndefined();
    expect(seen.seen("ns/a", at("Service", "a-pool-relay", "d5", "105"))).toBeUndefined();
    expect(seen.seen("ns/a", at("Deployment", "other", "d5", "105"))).toBeUndefined();
    expect(seen.seen("ns/b", at("Deployment", "a-pool-relay", "d5", "105"))).toBeUndefined();
  });

  it("replaces a key's versions of the kinds the next run read: an older one, or one of a child no longer there, is read again", () => {
    const seen = new SeenVersions(10);
    seen.record(
      "ns/a",
      [at("Deployment", "a-pool-relay", "d5", "105"), at("EndpointSlice", "a-pool-relay-x", "d6", "106")],
      ["Deployment", "EndpointSlice"],
      "200",
    );
    seen.record("ns/a", [at("Deployment", "a-pool-relay", "d8", "108")], ["Deployment", "EndpointSlice"], "200");
    expect(seen.seen("ns/a", at("Deployment", "a-pool-relay", "d8", "108"))).toBe("same");
    expect(seen.seen("ns/a", at("Deployment", "a-pool-relay", "d5", "105"))).toBe("older");
    expect(seen.seen("ns/a", at("Deployment", "a-pool-relay", "d5", "109"))).toBeUndefined();
    expect(seen.seen("ns/a", at("EndpointSlice", "a-pool-relay-x", "d6", "106"))).toBeUndefined();
  });

  it('tells an equal object at a newer or incomparable version ("equal": the same only while the status is the one the run left) from a duplicate ("same")', () => {
    const seen = new SeenVersions(10);
    seen.record("ns/a", [at("Deployment", "a-pool-relay", "d8", "108")], ["Deployment"], "200");
    expect(seen.seen("ns/a", at("Deployment", "a-pool-relay", "d8", "108"))).toBe("same");
    expect(seen.seen("ns/a", at("Deployment", "a-pool-relay", "d8", "1000"))).toBe("equal");
    expect(seen.seen("ns/a", v("Deployment", "a-pool-relay", "d8"))).toBe("equal");
    expect(seen.seen("ns/a", at("Deployment", "a-pool-relay", "d9", "1000"))).toBeUndefined();
  });

  it("carries over what it recorded of a kind the next run did not read, for that very version only: an equal object at a newer version may have changed and changed back", () => {
    const seen = new SeenVersions(10);
    const kindAt = (kind: string, digest: string, resourceVersion: string) =>
      at(kind, `a-${kind}`, digest, resourceVersion);
    seen.record(
      "ns/a",
      [kindAt("Deployment", "d5", "105"), kindAt("Service", "s6", "106")],
      ["Deployment", "Service"],
      "200",
    );
    // Read by the last run: an equal object at a newer version is equal.
    expect(seen.seen("ns/a", kindAt("Service", "s6", "120"))).toBe("equal");
    seen.record("ns/a", [kindAt("Deployment", "d8", "108")], ["Deployment"], "201");
    expect(seen.seen("ns/a", kindAt("Deployment", "d8", "130"))).toBe("equal");
    expect(seen.seen("ns/a", kindAt("Service", "s6", "106"))).toBe("same");
    expect(seen.seen("ns/a", kindAt("Service", "s6", "120"))).toBeUndefined();
    expect(seen.seen("ns/a", kindAt("Service", "s6", "99"))).toBe("older");
    expect(seen.seen("ns/a", v("Service", "a-Service", "s6"))).toBeUndefined();
    expect(seen.seen("ns/a", kindAt("Deployment", "d5", "105"))).toBe("older");
  });

  it("knows an event's object is older than what the last run read by its resourceVersion, whatever its digest", () => {
    const seen = new SeenVersions(10);
    const rv = (digest: string, resourceVersion: string) => at("Deployment", "a-pool-relay", digest, resourceVersion);
    seen.record("ns/a", [rv("d8", "108")], ["Deployment"], "200");
    expect(seen.seen("ns/a", rv("d5", "99"))).toBe("older");
    expect(seen.seen("ns/a", rv("d8", "99"))).toBe("older");
    expect(seen.seen("ns/a", rv("d8", "108"))).toBe("same");
    expect(seen.seen("ns/a", rv("d9", "108"))).toBeUndefined();
    expect(seen.seen("ns/a", rv("d5", "099"))).toBeUndefined();
    expect(seen.seen("ns/a", v("Deployment", "a-pool-relay", "d5"))).toBeUndefined();
    expect(seen.seen("ns/a", { ...rv("d5", "99"), name: "other" })).toBeUndefined();
  });

  it("knows whether the DynamoPoolRelay still has the status the last run left: at that resourceVersion only", () => {
    const seen = new SeenVersions(10);
    seen.record("ns/a", [at("Deployment", "a-pool-relay", "d8", "108")], ["Deployment"], "200");
    expect(seen.unwritten("ns/a", "200")).toBe(true);
    expect(seen.unwritten("ns/a", "201")).toBe(false);
    expect(seen.unwritten("ns/a", undefined)).toBe(false);
    expect(seen.unwritten("ns/b", "200")).toBe(false);
    seen.record("ns/a", [at("Deployment", "a-pool-relay", "d8", "108")], ["Deployment"], "201");
    expect(seen.unwritten("ns/a", "201")).toBe(true);
    expect(seen.unwritten("ns/a", "200")).toBe(false);
    // A run that had no resourceVersion to go by vouches for none.
    seen.record("ns/a", [at("Deployment", "a-pool-relay", "d8", "108")], ["Deployment"], undefined);
    expect(seen.unwritten("ns/a", undefined)).toBe(false);
  });

  it("forgets a key on request", () => {
    const seen = new SeenVersions(10);
    seen.record("ns/a", [at("Deployment", "a-pool-relay", "d5", "105")], ["Deployment"], "200");
    expect(seen.seen("ns/a", at("Deployment", "a-pool-relay", "d5", "105"))).toBe("same");
    expect(seen.unwritten("ns/a", "200")).toBe(true);
    seen.forget("ns/a");
    expect(seen.seen("ns/a", at("Deployment", "a-pool-relay", "d5", "105"))).toBeUndefined();
    expect(seen.unwritten("ns/a", "200")).toBe(false);
    expect(seen.size).toBe(0);
  });

  it("holds at most its capacity of keys, forgetting the least recently recorded first", () => {
    const seen = new SeenVersions(2);
    seen.record("ns/a", [at("Deployment", "a", "1", "1")], ["Deployment"], "10");
    seen.record("ns/b", [at("Deployment", "b", "1", "1")], ["Deployment"], "10");
    seen.record("ns/a", [at("Deployment", "a", "2", "2")], ["Deployment"], "10");
    seen.record("ns/c", [at("Deployment", "c", "1", "1")], ["Deployment"], "10");
    expect(seen.size).toBe(2);
    expect(seen.seen("ns/a", at("Deployment", "a", "2", "2"))).toBe("same");
    expect(seen.seen("ns/c", at("Deployment", "c", "1", "1"))).toBe("same");
    expect(seen.seen("ns/b", at("Deployment", "b", "1", "1"))).toBeUndefined();
  });
});
