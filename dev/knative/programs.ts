/**
 * Which local program runs a container image, and how its listening ports can be moved. The local
 * kubelet (kubelet.ts) runs a Deployment's or Knative Service's container as a process on this
 * machine only when its image is in this table; every other pod stays a kwok pod (nothing runs).
 *
 * Ports: in a cluster every pod has its own network, so Knative's programs all listen on :8080.
 * On one host they cannot, so each port a program takes from an env var (INGRESS_PORT, PORT, ...)
 * is given a free port, and the proxy maps the cluster address to it. A port a program hard-codes
 * (the InMemoryChannel dispatcher's :8080 and :8443) is "fixed": it must be free, and only one
 * program may hold it.
 */

export interface Program {
  /** A label for logs and errors. */
  name: string;
  /** Executable and leading arguments. */
  command: string[];
  /** Container port -> the env var that sets it. */
  portEnv: Record<number, string>;
  /** Container ports the program binds itself on all interfaces, whatever its env says. */
  fixedPorts: number[];
  /** Go programs of knative.dev/pkg: each needs its own pprof port (PROFILING_PORT, default 8008). */
  go: boolean;
  /** Container path prefix -> local path: where the image's files are on this machine. */
  paths: Record<string, string>;
  cwd?: string;
}

/** The Knative Eventing commands built by scripts/control-plane-build.sh knative, by Go package under cmd/. */
const KNATIVE_COMMANDS: Record<string, { binary: string; portEnv?: Record<number, string>; fixedPorts?: number[] }> = {
  "broker/ingress": { binary: "ingress", portEnv: { 8080: "INGRESS_PORT", 8443: "INGRESS_PORT_HTTPS" } },
  "broker/filter": { binary: "filter", portEnv: { 8080: "FILTER_PORT", 8443: "FILTER_PORT_HTTPS" } },
  "in_memory/channel_dispatcher": { binary: "channel_dispatcher", fixedPorts: [8080, 8443] },
  mtping: { binary: "mtping" },
  apiserver_receive_adapter: { binary: "apiserver_receive_adapter" },
};

/**
 * An image of a Knative Eventing command: `ko://knative.dev/eventing/cmd/<path>` as in Knative's
 * own config/, or a published `<registry>/knative.dev/eventing/cmd/<path>` with a tag or digest.
 */
const KNATIVE_IMAGE = /^(?:ko:\/\/|\S+\/)knative\.dev\/eventing\/cmd\/([a-z_/]+?)(?::[\w.-]+)?(?:@sha256:[0-9a-f]{64})?$/;

export interface ProductImage {
  /** Image name without tag, e.g. `dynamo-pool-relay`. */
  name: string;
  program: Program;
}

export function knativeProgram(image: string, binDir: string): Program | undefined {
  const path = KNATIVE_IMAGE.exec(image)?.[1];
  const known = path === undefined ? undefined : KNATIVE_COMMANDS[path];
  if (!known) return undefined;
  return {
    name: known.binary,
    command: [`${binDir}/${known.binary}`],
    portEnv: known.portEnv ?? {},
    fixedPorts: known.fixedPorts ?? [],
    go: true,
    paths: {},
  };
}

/** The program for an image: a Knative command, or one of the product's images; undefined runs nothing. */
export function programFor(image: string, binDir: string, products: readonly ProductImage[]): Program | undefined {
  const knative = knativeProgram(image, binDir);
  if (knative) return knative;
  const name = image.replace(/@sha256:[0-9a-f]{64}$/, "").replace(/:[\w.-]+$/, "");
  return products.find((p) => p.name === name)?.program;
}

/** An env value with container paths turned into local ones (longest prefix first). */
export function localPath(value: string, paths: Record<string, string>): string {
  const prefix = Object.keys(paths)
    .sort((a, b) => b.length - a.length)
    .find((p) => value.startsWith(p));
  return prefix === undefined ? value : paths[prefix] + value.slice(prefix.length);
}
