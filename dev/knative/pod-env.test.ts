import { describe, expect, it } from "vitest";
import { expand, fieldValue, resolveEnv, type PodFacts } from "./pod-env.ts";

const pod: PodFacts = {
  name: "mt-broker-ingress-local", namespace: "knative-eventing", uid: "u-1", serviceAccountName: "mt-broker-ingress",
  nodeName: "localhost", podIP: "127.0.0.1", labels: { app: "ingress" }, annotations: { "a.b/c": "d" },
};

describe("fieldValue", () => {
  it.each([
    ["metadata.name", "mt-broker-ingress-local"],
    ["metadata.namespace", "knative-eventing"],
    ["metadata.uid", "u-1"],
    ["spec.serviceAccountName", "mt-broker-ingress"],
    ["spec.nodeName", "localhost"],
    ["status.podIP", "127.0.0.1"],
    ["metadata.labels['app']", "ingress"],
    ["metadata.annotations['a.b/c']", "d"],
    ["metadata.labels['missing']", undefined],
    ["status.phase", undefined],
  ])("%s -> %s", (path, expected) => {
    expect(fieldValue(path, pod)).toBe(expected);
  });
});

describe("expand", () => {
  it.each<{ value: string; vars: Record<string, string>; expected: string }>([
    { value: "$(A)-x", vars: { A: "a" }, expected: "a-x" },
    { value: "$(MISSING)", vars: {}, expected: "$(MISSING)" },
    { value: "$$(A)", vars: { A: "a" }, expected: "$(A)" },
    { value: "no refs", vars: { A: "a" }, expected: "no refs" },
  ])("$value -> $expected", ({ value, vars, expected }) => {
    expect(expand(value, vars)).toBe(expected);
  });
});

describe("resolveEnv", () => {
  const lookup = (kind: string, name: string, key: string) => (kind === "ConfigMap" && name === "cm" && key === "k" ? "from-cm" : kind === "Secret" && name === "s" && key === "k" ? "from-secret" : undefined);

  it("resolves literals, pod fields, ConfigMap and Secret keys, and references to earlier variables, in order", () => {
    const r = resolveEnv([
      { name: "NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
      { name: "URL", value: "http://x.$(NAMESPACE).svc" },
      { name: "LATER", value: "$(DEFINED_AFTER)" },
      { name: "DEFINED_AFTER", value: "z" },
      { name: "CM", valueFrom: { configMapKeyRef: { name: "cm", key: "k" } } },
      { name: "SECRET", valueFrom: { secretKeyRef: { name: "s", key: "k" } } },
      { name: "OPTIONAL", valueFrom: { configMapKeyRef: { name: "gone", key: "k", optional: true } } },
      { name: "LIMIT", valueFrom: { resourceFieldRef: { resource: "limits.memory" } } },
    ], pod, lookup);
    expect(r).toEqual({
      env: { NAMESPACE: "knative-eventing", URL: "http://x.knative-eventing.svc", LATER: "$(DEFINED_AFTER)", DEFINED_AFTER: "z", CM: "from-cm", SECRET: "from-secret" },
      errors: [],
    });
  });

  it("reports what keeps the container from starting, as the kubelet would", () => {
    const r = resolveEnv([
      { name: "A", valueFrom: { configMapKeyRef: { name: "gone", key: "k" } } },
      { name: "B", valueFrom: { fieldRef: { fieldPath: "status.phase" } } },
    ], pod, lookup);
    expect(r.errors).toEqual(["A: ConfigMap knative-eventing/gone has no key k", "B: unsupported fieldRef status.phase"]);
  });
});
