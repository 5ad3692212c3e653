import { describe, expect, it } from "vitest";
import { collectionPath, knownResource, objectPath, splitApiVersion, type Resource } from "./resources.ts";

describe("splitApiVersion splits as Kubernetes' ParseGroupVersion does", () => {
  it.each([
    { apiVersion: "v1", want: { group: "", version: "v1" } },
    { apiVersion: "apps/v1", want: { group: "apps", version: "v1" } },
    { apiVersion: "nvidia.com/v1alpha1", want: { group: "nvidia.com", version: "v1alpha1" } },
    { apiVersion: "/v1", want: { group: "", version: "v1" } },
  ])("$apiVersion -> $want", ({ apiVersion, want }) => {
    expect(splitApiVersion(apiVersion)).toEqual(want);
  });
});

describe("knownResource", () => {
  it.each<{ apiVersion: string; kind: string; want: Resource | undefined }>([
    { apiVersion: "v1", kind: "Service", want: { group: "", version: "v1", plural: "services", namespaced: true } },
    {
      apiVersion: "v1",
      kind: "Namespace",
      want: { group: "", version: "v1", plural: "namespaces", namespaced: false },
    },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      want: { group: "apps", version: "v1", plural: "deployments", namespaced: true },
    },
    {
      apiVersion: "nvidia.com/v1alpha1",
      kind: "DynamoGraphDeployment",
      want: { group: "nvidia.com", version: "v1alpha1", plural: "dynamographdeployments", namespaced: true },
    },
    { apiVersion: "apps/v1", kind: "Service", want: undefined },
    { apiVersion: "v1", kind: "Deployment", want: undefined },
    { apiVersion: "example.com/v1", kind: "Widget", want: undefined },
  ])("$kind of $apiVersion -> $want", ({ apiVersion, kind, want }) => {
    expect(knownResource(apiVersion, kind)).toEqual(want);
  });
});

const service: Resource = { group: "", version: "v1", plural: "services", namespaced: true };
const clusterRole: Resource = {
  group: "rbac.authorization.k8s.io",
  version: "v1",
  plural: "clusterroles",
  namespaced: false,
};
const deployment: Resource = { group: "apps", version: "v1", plural: "deployments", namespaced: true };

describe("API paths", () => {
  it.each<{ name: string; path: () => string; want: string }>([
    {
      name: "a core collection in a namespace",
      path: () => collectionPath(service, "team-a"),
      want: "/api/v1/namespaces/team-a/services",
    },
    {
      name: "a core collection across namespaces",
      path: () => collectionPath(service, undefined),
      want: "/api/v1/services",
    },
    {
      name: "a core collection with an empty namespace",
      path: () => collectionPath(service, ""),
      want: "/api/v1/services",
    },
    {
      name: "a group collection in a namespace",
      path: () => collectionPath(deployment, "team-a"),
      want: "/apis/apps/v1/namespaces/team-a/deployments",
    },
    {
      name: "a cluster-scoped collection given a namespace",
      path: () => collectionPath(clusterRole, "team-a"),
      want: "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    },
    {
      name: "a namespaced object",
      path: () => objectPath(deployment, "team-a", "web"),
      want: "/apis/apps/v1/namespaces/team-a/deployments/web",
    },
    {
      name: "a cluster-scoped object with a colon in its name",
      path: () => objectPath(clusterRole, undefined, "system:node"),
      want: "/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Anode",
    },
  ])("builds $name", ({ path, want }) => {
    expect(path()).toBe(want);
  });

  it.each([
    {
      what: "an empty name",
      path: () => objectPath(service, "team-a", ""),
      message: 'refusing to build an API path from the name ""',
    },
    {
      what: "the name .",
      path: () => objectPath(service, "team-a", "."),
      message: 'refusing to build an API path from the name "."',
    },
    {
      what: "the name ..",
      path: () => objectPath(service, "team-a", ".."),
      message: 'refusing to build an API path from the name ".."',
    },
    {
      what: "a name with a slash",
      path: () => objectPath(service, "team-a", "web/status"),
      message: 'refusing to build an API path from the name "web/status"',
    },
    {
      what: "the namespace ..",
      path: () => collectionPath(service, ".."),
      message: 'refusing to build an API path from the name ".."',
    },
    {
      what: "a namespace with a slash",
      path: () => objectPath(service, "a/b", "web"),
      message: 'refusing to build an API path from the name "a/b"',
    },
  ])("refuses $what, which would address another path", ({ path, message }) => {
    expect(path).toThrow(message);
  });

  it("accepts names that only contain dots among other characters", () => {
    expect(objectPath(service, "team-a", "...")).toBe("/api/v1/namespaces/team-a/services/...");
    expect(objectPath(service, "team-a", "web.v2")).toBe("/api/v1/namespaces/team-a/services/web.v2");
  });
});
