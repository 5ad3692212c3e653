/**
 * The Go-built programs of the local control plane: KUBEBUILDER_ASSETS (or KNATIVE_ASSETS) when it
 * holds them all, else the build cache, building what is missing (a first build takes minutes; its
 * progress goes to stderr).
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export const BINARIES = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok"] as const;
export type Binary = (typeof BINARIES)[number];

const script = fileURLToPath(new URL("../../scripts/control-plane-build.sh", import.meta.url));

function build(set: "kube" | "knative"): string {
  const r = spawnSync("bash", [script, set], { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
  const dir = r.stdout.trim().split("\n").pop();
  if (r.status !== 0 || !dir) {
    throw new Error(`the ${set} binaries could not be built (scripts/control-plane-build.sh ${set} exited ${r.status}); see the messages above`);
  }
  return dir;
}

export function ensureBinaries(): Record<Binary | "kwokStages", string> {
  const dir = build("kube");
  return { ...(Object.fromEntries(BINARIES.map((b) => [b, `${dir}/${b}`])) as Record<Binary, string>), kwokStages: `${dir}/kwok-stages.yaml` };
}

export interface KnativeAssets {
  /** The folder of the Knative programs (eventing-controllers, knative-check, the data plane). */
  bin: string;
  /** Knative's config/ folders: `eventing/...` and `serving/...`. */
  config: string;
}

export function ensureKnative(): KnativeAssets {
  const dir = build("knative");
  return { bin: dir, config: `${dir}/config` };
}
