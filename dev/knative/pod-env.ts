/**
 * A container's environment as the kubelet builds it: literal values, Downward API fields of the
 * pod, ConfigMap and Secret keys, and `$(VAR)` references to variables defined before.
 */

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: { fieldPath: string };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    resourceFieldRef?: { resource: string };
  };
}

/** What the Downward API can tell about the pod the container runs in. */
export interface PodFacts {
  name: string;
  namespace: string;
  uid: string;
  serviceAccountName: string;
  nodeName: string;
  podIP: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** Reads a key of a ConfigMap or Secret in the pod's namespace; undefined when either is missing. */
export type KeyLookup = (kind: "ConfigMap" | "Secret", name: string, key: string) => string | undefined;

export function fieldValue(path: string, pod: PodFacts): string | undefined {
  const label = /^metadata\.labels\['(.+)'\]$/.exec(path);
  if (label) return pod.labels[label[1]!];
  const annotation = /^metadata\.annotations\['(.+)'\]$/.exec(path);
  if (annotation) return pod.annotations[annotation[1]!];
  const fields: Record<string, string> = {
    "metadata.name": pod.name,
    "metadata.namespace": pod.namespace,
    "metadata.uid": pod.uid,
    "spec.serviceAccountName": pod.serviceAccountName,
    "spec.nodeName": pod.nodeName,
    "status.podIP": pod.podIP,
    "status.hostIP": pod.podIP,
  };
  return fields[path];
}

/** Expands `$(NAME)` from the variables so far; `$$(NAME)` is a literal `$(NAME)`, unknown names stay as written. */
export function expand(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (m, name: string | undefined) =>
    name === undefined ? "$" : (vars[name] ?? m),
  );
}

export interface ResolvedEnv {
  env: Record<string, string>;
  /** Why the container cannot start (as the kubelet's CreateContainerConfigError). */
  errors: string[];
}

export function resolveEnv(vars: readonly EnvVar[] | undefined, pod: PodFacts, lookup: KeyLookup): ResolvedEnv {
  const env: Record<string, string> = {};
  const errors: string[] = [];
  for (const v of vars ?? []) {
    const from = v.valueFrom;
    if (!from) {
      env[v.name] = expand(v.value ?? "", env);
      continue;
    }
    if (from.fieldRef) {
      const value = fieldValue(from.fieldRef.fieldPath, pod);
      if (value === undefined) errors.push(`${v.name}: unsupported fieldRef ${from.fieldRef.fieldPath}`);
      else env[v.name] = value;
      continue;
    }
    const ref = from.configMapKeyRef ? { kind: "ConfigMap" as const, ...from.configMapKeyRef } : from.secretKeyRef ? { kind: "Secret" as const, ...from.secretKeyRef } : undefined;
    if (ref) {
      const value = lookup(ref.kind, ref.name, ref.key);
      if (value !== undefined) env[v.name] = value;
      else if (!ref.optional) errors.push(`${v.name}: ${ref.kind} ${pod.namespace}/${ref.name} has no key ${ref.key}`);
      continue;
    }
    // resourceFieldRef (limits and requests): nothing enforces them on this host.
  }
  return { env, errors };
}
