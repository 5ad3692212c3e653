/**
 * The control-plane binaries: KUBEBUILDER_ASSETS when it holds them all, else the build cache,
 * building what is missing (a first build takes minutes; its progress goes to stderr).
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export const BINARIES = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok"] as const;
export type Binary = (typeof BINARIES)[number];

const script = fileURLToPath(new URL("../../scripts/control-plane-build.sh", import.meta.url));

export function ensureBinaries(): Record<Binary | "kwokStages", string> {
  const r = spawnSync("bash", [script], { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
  const dir = r.stdout.trim().split("\n").pop();
  if (r.status !== 0 || !dir) {
    throw new Error(`the control-plane binaries could not be built (scripts/control-plane-build.sh exited ${r.status}); see the messages above`);
  }
  return { ...(Object.fromEntries(BINARIES.map((b) => [b, `${dir}/${b}`])) as Record<Binary, string>), kwokStages: `${dir}/kwok-stages.yaml` };
}
