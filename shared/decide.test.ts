import { describe, expect, it } from "vitest";
import { dgd, dpr } from "../test/builders.ts";
import { decide, objectKey } from "./decide.ts";
import { DEFAULT_OPERATOR_DEFAULTS } from "./eligibility.ts";

describe("decide", () => {
  it("applies for an eligible DGD, with namespaces, revisions and document", () => {
    const d = decide(dpr(), dgd(), DEFAULT_OPERATOR_DEFAULTS);
    expect(d.action).toBe("apply");
    if (d.action !== "apply") return;
    expect(d.workerNamespaces).toEqual(["team-a-g1"]);
    expect(d.sources.text).toContain(d.connectionRevision);
  });

  it.each([
    {
      name: "today's runtime when none is configured",
      settings: DEFAULT_OPERATOR_DEFAULTS,
      command: ["python3", "-m", "dynamo.kv_dc_relay"],
    },
    {
      name: "the configured one",
      settings: { ...DEFAULT_OPERATOR_DEFAULTS, relayCommand: ["dynamo-pool-relay"] },
      command: ["dynamo-pool-relay"],
    },
  ])("carries the Relay command, $name, and a connection revision that covers it", ({ settings, command }) => {
    const d = decide(dpr(), dgd(), settings);
    const other = decide(dpr(), dgd(), { ...DEFAULT_OPERATOR_DEFAULTS, relayCommand: [...command, "--other"] });
    if (d.action !== "apply" || other.action !== "apply") throw new Error("expected apply");
    expect(d.relayCommand).toEqual(command);
    expect(other.connectionRevision).not.toBe(d.connectionRevision);
    expect(other.sources.text).toContain(other.connectionRevision);
  });

  it("withdraws when the DGD is missing", () => {
    expect(decide(dpr(), undefined, DEFAULT_OPERATOR_DEFAULTS)).toMatchObject({
      action: "withdraw",
      reason: "DGDNotFound",
    });
  });

  it("withdraws, naming the field, when the DGD cannot be read", () => {
    const broken = { ...dgd(), spec: { components: "nope" } };
    const d = decide(dpr(), broken, DEFAULT_OPERATOR_DEFAULTS);
    expect(d).toMatchObject({ action: "withdraw", reason: "InvalidDGD" });
    expect(d.action === "withdraw" && d.message).toMatch(
      /DynamoGraphDeployment team-a\/g1 is invalid: spec\.components/,
    );
  });

  it("rejects an invalid DynamoPoolRelay without looking at the DGD", () => {
    const d = decide(
      { ...dpr(), spec: { image: "r", clusterID: "c", replicas: -3 } },
      undefined,
      DEFAULT_OPERATOR_DEFAULTS,
    );
    expect(d).toMatchObject({ action: "reject", reason: "InvalidSpec" });
    expect(d.action === "reject" && d.message).toMatch(/DynamoPoolRelay team-a\/g1 is invalid: spec\.replicas/);
  });

  it("withdraws when the worker namespaces exceed the Relay's limits", () => {
    const names = Array.from({ length: 4097 }, (_, i) => `g1-decode-h${i}`);
    expect(decide(dpr(), dgd({ componentNames: { decode: names } }), DEFAULT_OPERATOR_DEFAULTS)).toMatchObject({
      action: "withdraw",
      reason: "SourcesLimitExceeded",
    });
  });
});

describe("objectKey", () => {
  it.each([
    { name: "namespace and name", obj: { metadata: { namespace: "team-a", name: "g1" } }, expected: "team-a/g1" },
    { name: "a name without namespace", obj: { metadata: { name: "g1" } }, expected: "/g1" },
    { name: "a namespace without name", obj: { metadata: { namespace: "team-a" } }, expected: "team-a/" },
    { name: "no metadata", obj: {}, expected: "/" },
    { name: "no object", obj: undefined, expected: "/" },
  ])("names an object with $name as <namespace>/<name>, empty where missing", ({ obj, expected }) => {
    expect(objectKey(obj)).toBe(expected);
  });

  it("names a DynamoPoolRelay without metadata in the rejection as /", () => {
    expect(
      decide(
        { apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", spec: { image: "r", clusterID: "c" } },
        undefined,
        DEFAULT_OPERATOR_DEFAULTS,
      ),
    ).toEqual({
      action: "reject",
      reason: "InvalidSpec",
      message: "DynamoPoolRelay / is invalid: metadata: Invalid input: expected object, received undefined",
    });
  });
});
