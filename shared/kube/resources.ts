/**
 * Where each kind lives in the API. Kinds the product uses are listed, so a request needs no
 * discovery call; any other kind is looked up once through discovery and cached.
 */

export interface Resource {
  group: string;
  version: string;
  plural: string;
  namespaced: boolean;
}

const KNOWN: Record<string, Omit<Resource, "version">> = {
  Namespace: { group: "", plural: "namespaces", namespaced: false },
  Node: { group: "", plural: "nodes", namespaced: false },
  ConfigMap: { group: "", plural: "configmaps", namespaced: true },
  Secret: { group: "", plural: "secrets", namespaced: true },
  Service: { group: "", plural: "services", namespaced: true },
  ServiceAccount: { group: "", plural: "serviceaccounts", namespaced: true },
  Pod: { group: "", plural: "pods", namespaced: true },
  Event: { group: "", plural: "events", namespaced: true },
  Deployment: { group: "apps", plural: "deployments", namespaced: true },
  ReplicaSet: { group: "apps", plural: "replicasets", namespaced: true },
  EndpointSlice: { group: "discovery.k8s.io", plural: "endpointslices", namespaced: true },
  Role: { group: "rbac.authorization.k8s.io", plural: "roles", namespaced: true },
  RoleBinding: { group: "rbac.authorization.k8s.io", plural: "rolebindings", namespaced: true },
  ClusterRole: { group: "rbac.authorization.k8s.io", plural: "clusterroles", namespaced: false },
  ClusterRoleBinding: { group: "rbac.authorization.k8s.io", plural: "clusterrolebindings", namespaced: false },
  CustomResourceDefinition: { group: "apiextensions.k8s.io", plural: "customresourcedefinitions", namespaced: false },
  DynamoPoolRelay: { group: "nvidia.com", plural: "dynamopoolrelays", namespaced: true },
  DynamoGraphDeployment: { group: "nvidia.com", plural: "dynamographdeployments", namespaced: true },
  DynamoWorkerMetadata: { group: "nvidia.com", plural: "dynamoworkermetadatas", namespaced: true },
};

export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf("/");
  return slash < 0
    ? { group: "", version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** The known resource for a kind, when the apiVersion's group matches. */
export function knownResource(apiVersion: string, kind: string): Resource | undefined {
  const { group, version } = splitApiVersion(apiVersion);
  const known = KNOWN[kind];
  return known && known.group === group ? { ...known, version } : undefined;
}

/** A last guard under the callers' name checks: `.`, `..` or `/` would make another path than the one meant. */
function segment(value: string): string {
  if (value === "" || value === "." || value === ".." || value.includes("/"))
    throw new Error(`refusing to build an API path from the name ${JSON.stringify(value)}`);
  return encodeURIComponent(value);
}

export function collectionPath(r: Resource, namespace: string | undefined): string {
  const base = r.group === "" ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  return r.namespaced && namespace ? `${base}/namespaces/${segment(namespace)}/${r.plural}` : `${base}/${r.plural}`;
}

export function objectPath(r: Resource, namespace: string | undefined, name: string): string {
  return `${collectionPath(r, namespace)}/${segment(name)}`;
}
