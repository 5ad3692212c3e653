/**
 * Credentials without @kubernetes/client-node, for the two ways a function meets them: in a pod (the
 * ServiceAccount's token, which the kubelet rotates, and the cluster's CA) and a kubeconfig whose
 * context needs only files and data (a token or token file, a client certificate, a CA). Loading
 * client-node's config module (1.2 MiB of JavaScript) was most of a function's cold start; it stays
 * the loader of everything else: exec plugins, auth providers, basic auth, impersonation,
 * `proxy-url`, several kubeconfig files, a context whose user is missing.
 */
import { existsSync, readFileSync } from "node:fs";
import { isIPv6 } from "node:net";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";

/** Where the kubelet mounts a pod's ServiceAccount credentials. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

export interface SimpleCredentials {
  server: string;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  /** `insecure-skip-tls-verify`. */
  skipTLSVerify?: true;
  servername?: string;
  /** The bearer token, read again on every call: token files rotate. */
  token?: () => string;
}

/** The fields this loader understands; a cluster or user with any other set goes to client-node. */
const CLUSTER_FIELDS = new Set([
  "server",
  "certificate-authority",
  "certificate-authority-data",
  "insecure-skip-tls-verify",
  "tls-server-name",
]);
const USER_FIELDS = new Set([
  "token",
  "tokenFile",
  "client-certificate",
  "client-certificate-data",
  "client-key",
  "client-key-data",
]);

type Fields = Record<string, unknown>;

/**
 * The credentials the default chain (or `kubeconfig`) selects, in the order client-node reads them
 * (KUBECONFIG, ~/.kube/config, the pod's ServiceAccount), or undefined when they need client-node.
 */
export async function simpleCredentials(
  kubeconfig: string | undefined,
  env: Record<string, string | undefined>,
  home = homedir(),
  serviceAccountDir = SERVICE_ACCOUNT_DIR,
): Promise<SimpleCredentials | undefined> {
  if (kubeconfig) return fromKubeconfig(kubeconfig);
  const files = env["KUBECONFIG"];
  if (files) return files.includes(":") ? undefined : fromKubeconfig(files);
  const file = join(home, ".kube", "config");
  if (existsSync(file)) return fromKubeconfig(file);
  return inCluster(env, serviceAccountDir);
}

function inCluster(env: Record<string, string | undefined>, dir: string): SimpleCredentials | undefined {
  const host = env["KUBERNETES_SERVICE_HOST"];
  const port = env["KUBERNETES_SERVICE_PORT"];
  const tokenFile = join(dir, "token");
  if (!host || !port || !existsSync(tokenFile)) return undefined;
  const scheme = ["80", "8080", "8001"].includes(port) ? "http" : "https";
  return {
    server: `${scheme}://${isIPv6(host) ? `[${host}]` : host}:${port}`,
    ca: readFileSync(join(dir, "ca.crt")),
    token: () => readFileSync(tokenFile, "utf8").trim(),
  };
}

/**
 * A kubeconfig in JSON (which is YAML too; `kubectl config view -o json` writes one) is read without
 * loading the YAML parser, about 35 ms of a cold start here: as light as a pod's mounted token.
 */
async function parseKubeconfig(text: string): Promise<Fields | null> {
  if (text.trimStart().startsWith("{")) {
    try {
      return JSON.parse(text) as Fields;
    } catch {
      // A YAML flow mapping, not JSON: the YAML parser reads it.
    }
  }
  const yaml = await import("yaml");
  // In a function's bundle the package's CommonJS build arrives as the default export only.
  const { parse } = "parse" in yaml ? yaml : (yaml as unknown as { default: typeof yaml }).default;
  return parse(text) as Fields | null;
}

async function fromKubeconfig(file: string): Promise<SimpleCredentials | undefined> {
  const config = await parseKubeconfig(readFileSync(file, "utf8"));
  const contextName = config?.["current-context"];
  const context = entry(config?.["contexts"], contextName, "context");
  const cluster = entry(config?.["clusters"], context?.["cluster"], "cluster");
  const user = entry(config?.["users"], context?.["user"], "user");
  if (!cluster || !user || typeof cluster["server"] !== "string") return undefined;
  if (!onlyKnown(cluster, CLUSTER_FIELDS) || !onlyKnown(user, USER_FIELDS)) return undefined;
  const root = dirname(file);
  const bytes = (path: unknown, data: unknown) =>
    typeof path === "string" && path
      ? readFileSync(isAbsolute(path) ? path : join(root, path))
      : typeof data === "string" && data
        ? Buffer.from(data, "base64")
        : undefined;
  const ca = bytes(cluster["certificate-authority"], cluster["certificate-authority-data"]);
  const cert = bytes(user["client-certificate"], user["client-certificate-data"]);
  const key = bytes(user["client-key"], user["client-key-data"]);
  const token = bearer(user, root);
  return {
    server: cluster["server"].replace(/\/$/, ""),
    ...(ca ? { ca } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(cluster["insecure-skip-tls-verify"] === true ? { skipTLSVerify: true as const } : {}),
    ...(typeof cluster["tls-server-name"] === "string" && cluster["tls-server-name"]
      ? { servername: cluster["tls-server-name"] }
      : {}),
    ...(token ? { token } : {}),
  };
}

/** As client-node finds it: `token`, else the contents of `tokenFile` (read on every request). */
function bearer(user: Fields, root: string): (() => string) | undefined {
  if (typeof user["token"] === "string" && user["token"]) {
    const token = user["token"];
    return () => token;
  }
  const file = user["tokenFile"];
  if (typeof file !== "string" || !file) return undefined;
  const path = isAbsolute(file) ? file : join(root, file);
  return () => readFileSync(path, "utf8").trim();
}

function entry(list: unknown, name: unknown, field: string): Fields | undefined {
  if (!Array.isArray(list) || typeof name !== "string" || !name) return undefined;
  const found = (list as (Fields | null)[]).find((e) => e?.["name"] === name)?.[field];
  return found && typeof found === "object" ? (found as Fields) : undefined;
}

function onlyKnown(fields: Fields, known: Set<string>): boolean {
  // A parsed kubeconfig holds no undefined: an empty field is null (`~`, nothing) or "".
  return Object.entries(fields).every(([k, v]) => known.has(k) || v === null || v === "");
}
