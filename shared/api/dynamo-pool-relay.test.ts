import { describe, expect, it } from "vitest";
import { formatIssues } from "../issues.ts";
import { DynamoPoolRelay } from "./dynamo-pool-relay.ts";
import { DynamoGraphDeployment } from "./dynamo-graph-deployment.ts";

const valid = {
  apiVersion: "nvidia.com/v1alpha1",
  kind: "DynamoPoolRelay",
  metadata: { name: "g1", namespace: "team-a" },
  spec: { image: "relay:1", clusterID: "dc-1" },
};
const withSpec = (spec: Record<string, unknown>) => ({ ...valid, spec: { ...valid.spec, ...spec } });
const message = (input: unknown) => {
  const r = DynamoPoolRelay.safeParse(input);
  return r.success ? "" : formatIssues(r.error, "DynamoPoolRelay team-a/g1");
};

describe("DynamoPoolRelay schema", () => {
  it("defaults replicas to 2", () => {
    expect(DynamoPoolRelay.parse(valid).spec.replicas).toBe(2);
  });

  it.each([
    {
      name: "a missing image",
      input: { ...valid, spec: { clusterID: "dc-1" } },
      expected: /spec\.image: Invalid input: expected string, received undefined/,
    },
    { name: "a missing clusterID", input: { ...valid, spec: { image: "r" } }, expected: /spec\.clusterID/ },
    {
      name: "a clusterID with surrounding whitespace",
      input: withSpec({ clusterID: " dc" }),
      expected: /spec\.clusterID/,
    },
    { name: "negative replicas", input: withSpec({ replicas: -1 }), expected: /spec\.replicas: Too small/ },
    { name: "fractional replicas", input: withSpec({ replicas: 1.5 }), expected: /spec\.replicas/ },
    {
      name: "reserved env names, all named",
      input: withSpec({
        env: [
          { name: "POD_UID", value: "x" },
          { name: "OK", value: "1" },
          { name: "DYN_DC_ID", value: "y" },
        ],
      }),
      expected:
        /spec\.env\[0\]: the product sets POD_UID itself; remove it from spec\.env; spec\.env\[2\]: the product sets DYN_DC_ID itself; remove it from spec\.env$/,
    },
    {
      name: "a name that cannot form the Service name",
      input: { ...valid, metadata: { name: "g.1" } },
      expected:
        /is invalid: metadata\.name must be a DNS-1035 label of at most 52 characters \(lower-case letters, digits and '-', starting with a letter, no dots\) so that the Service <name>-pool-relay can exist$/,
    },
    { name: "a bad pull policy", input: withSpec({ imagePullPolicy: "Sometimes" }), expected: /spec\.imagePullPolicy/ },
  ])("rejects $name with a message naming the field", ({ input, expected }) => {
    expect(message(input)).toMatch(expected);
  });

  it("reports every problem at once", () => {
    expect(message({ ...valid, spec: { replicas: -1 } })).toMatch(/spec\.image.*spec\.clusterID.*spec\.replicas/);
  });
});

describe("DynamoGraphDeployment schema", () => {
  it("accepts both served shapes and keeps unknown fields", () => {
    const beta = {
      apiVersion: "nvidia.com/v1beta1",
      kind: "DynamoGraphDeployment",
      metadata: { name: "g" },
      spec: { components: [{ name: "w", type: "worker", replicas: 3 }], backendFramework: "vllm" },
    };
    const alpha = {
      apiVersion: "nvidia.com/v1alpha1",
      kind: "DynamoGraphDeployment",
      metadata: { name: "g" },
      spec: { services: { w: { componentType: "worker", envs: [] } } },
    };
    expect(DynamoGraphDeployment.parse(beta)).toEqual(beta);
    expect(DynamoGraphDeployment.parse(alpha)).toEqual(alpha);
  });

  it("rejects a components field that is not a list", () => {
    const r = DynamoGraphDeployment.safeParse({
      apiVersion: "nvidia.com/v1beta1",
      kind: "DynamoGraphDeployment",
      metadata: { name: "g" },
      spec: { components: {} },
    });
    expect(r.success).toBe(false);
    // For that reason alone: the rest of this DGD is valid.
    expect(r.success ? "" : formatIssues(r.error, "DynamoGraphDeployment team-a/g")).toBe(
      "DynamoGraphDeployment team-a/g is invalid: spec.components: Invalid input: expected array, received object",
    );
  });
});
