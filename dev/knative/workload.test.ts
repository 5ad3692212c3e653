import { describe, expect, it } from "vitest";
import { containerName, containerPortOf, selects, servingPort, servingStatus, workloadOf } from "./workload.ts";

const template = {
  metadata: { labels: { app: "x" }, annotations: { a: "b" } },
  spec: { serviceAccountName: "sa", containers: [{ name: "c", image: "img", ports: [{ containerPort: 9000, name: "http" }] }] },
};

describe("workloadOf", () => {
  it("reads a Deployment: its pod template and replica count (default 1)", () => {
    const w = workloadOf({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d", namespace: "n", uid: "u", generation: 3 }, spec: { template } });
    expect(w).toEqual({
      kind: "Deployment", namespace: "n", name: "d", uid: "u", generation: 3, replicas: 1,
      labels: { app: "x" }, annotations: { a: "b" }, serviceAccountName: "sa", containers: template.spec.containers,
    });
  });

  it.each([
    { name: "scaled to zero", obj: { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" }, spec: { replicas: 0, template } }, replicas: 0 },
    { name: "being deleted", obj: { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d", deletionTimestamp: "2026-01-01T00:00:00Z" }, spec: { replicas: 3, template } }, replicas: 0 },
    { name: "a Knative Service (runs one process, no scale to zero)", obj: { apiVersion: "serving.knative.dev/v1", kind: "Service", metadata: { name: "k" }, spec: { template } }, replicas: 1 },
  ])("$name: $replicas replicas", ({ obj, replicas }) => {
    expect(workloadOf(obj)?.replicas).toBe(replicas);
  });

  it("defaults the namespace and the ServiceAccount as the API server does", () => {
    const w = workloadOf({ apiVersion: "serving.knative.dev/v1", kind: "Service", metadata: { name: "k" }, spec: { template: { spec: { containers: [{ image: "i" }] } } } });
    expect(w).toMatchObject({ kind: "KnativeService", namespace: "default", serviceAccountName: "default", labels: {} });
  });

  it.each([
    { apiVersion: "v1", kind: "Service" },
    { apiVersion: "apps/v1", kind: "StatefulSet" },
    { apiVersion: "example.com/v1", kind: "Deployment" },
  ])("is nothing for $apiVersion $kind", ({ apiVersion, kind }) => {
    expect(workloadOf({ apiVersion, kind, metadata: { name: "x" }, spec: { template } })).toBeUndefined();
  });
});

describe("Services and ports", () => {
  it.each<{ selector: Record<string, string> | undefined; labels: Record<string, string>; expected: boolean }>([
    { selector: { app: "x" }, labels: { app: "x", tier: "y" }, expected: true },
    { selector: { app: "x", tier: "z" }, labels: { app: "x", tier: "y" }, expected: false },
    { selector: {}, labels: { app: "x" }, expected: false },
    { selector: undefined, labels: { app: "x" }, expected: false },
  ])("selector $selector selects $labels: $expected", ({ selector, labels, expected }) => {
    expect(selects(selector, labels)).toBe(expected);
  });

  it.each([
    { target: 8080, expected: 8080 },
    { target: "8081", expected: 8081 },
    { target: "http", expected: 9000 },
    { target: "metrics", expected: undefined },
  ])("targetPort $target is container port $expected", ({ target, expected }) => {
    expect(containerPortOf(template.spec.containers[0]!, target)).toBe(expected);
  });

  it("serves a Knative Service on its declared port, 8080 when none is declared; names an unnamed container as Serving does", () => {
    expect(servingPort(template.spec.containers[0]!)).toBe(9000);
    expect(servingPort({ image: "i" })).toBe(8080);
    expect(containerName({ image: "i" }, 0)).toBe("user-container");
    expect(containerName({ image: "i", name: "function" }, 0)).toBe("function");
  });
});

describe("servingStatus", () => {
  const w = workloadOf({ apiVersion: "serving.knative.dev/v1", kind: "Service", metadata: { name: "poolrelay-apply", namespace: "dynamo-system", generation: 2 }, spec: { template } })!;

  it("is Ready at the cluster-local address while the process runs", () => {
    expect(servingStatus(w, true, undefined, "2026-01-01T00:00:00Z")).toEqual({
      observedGeneration: 2,
      conditions: ["ConfigurationsReady", "Ready", "RoutesReady"].map((type) => ({ type, status: "True", lastTransitionTime: "2026-01-01T00:00:00Z" })),
      url: "http://poolrelay-apply.dynamo-system.svc.cluster.local",
      address: { url: "http://poolrelay-apply.dynamo-system.svc.cluster.local" },
    });
  });

  it("is not Ready, saying why, while it does not", () => {
    const status = servingStatus(w, false, "exited with code 1", "2026-01-01T00:00:00Z") as { conditions: { type: string; status: string; message: string }[] };
    expect(status.conditions.find((c) => c.type === "Ready")).toMatchObject({ status: "False", reason: "LocalProcessNotRunning", message: "exited with code 1" });
  });
});
