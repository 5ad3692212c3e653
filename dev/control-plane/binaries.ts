/**
 * The Go-built programs of the local control plane: KUBEBUILDER_ASSETS (or KNATIVE_ASSETS) when it
 * holds them all, else the build cache, building what is missing (a first build takes minutes; its
 * progress goes to stderr).
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export const BINARIES = [
  "etcd",
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kubectl",
  "kwok",
] as const;
export type Binary = (typeof BINARIES)[number];

const script = fileURLToPath(new URL("../../scripts/control-plane-build.sh", import.meta.url));

function build(set: "kube" | "knative" | "node"): string {
  return lastLine(
    spawnSync("bash", [script, set], { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" }),
    `scripts/control-plane-build.sh ${set}`,
    `the ${set} binaries`,
  );
}

function lastLine(r: ReturnType<typeof spawnSync>, command: string, what: string): string {
  const dir = String(r.stdout).trim().split("\n").pop();
  if (r.status !== 0 || !dir)
    throw new Error(`${what} could not be built (${command} exited ${r.status}); see the messages above`);
  return dir;
}

export function ensureBinaries(): Record<Binary | "kwokStages", string> {
  const dir = build("kube");
  return {
    ...(Object.fromEntries(BINARIES.map((b) => [b, `${dir}/${b}`])) as Record<Binary, string>),
    kwokStages: `${dir}/kwok-stages.yaml`,
  };
}

export interface KnativeAssets {
  /** The folder of the Knative programs (Serving, Eventing, Traefik, knative-check) and their config/. */
  bin: string;
  /** Knative's config/ folders: `eventing/...` and `serving/...`. */
  config: string;
}

export function ensureKnative(): KnativeAssets {
  const dir = build("knative");
  return { bin: dir, config: `${dir}/config` };
}

/** The programs of a real node (dev/node/): kubelet, kube-proxy, containerd, runc, the CNI plugins, CoreDNS, pause. */
export function ensureNode(): string {
  return build("node");
}

/** The node's images, built with buildah (scripts/images-build.sh): a folder of docker-archives to import. */
export function ensureImages(nodeAssets: string, knativeBin?: string): string {
  const images = fileURLToPath(new URL("../../scripts/images-build.sh", import.meta.url));
  return lastLine(
    spawnSync("bash", [images, nodeAssets, ...(knativeBin ? [knativeBin] : [])], {
      stdio: ["ignore", "pipe", "inherit"],
      encoding: "utf8",
    }),
    "scripts/images-build.sh",
    "the node's images",
  );
}
