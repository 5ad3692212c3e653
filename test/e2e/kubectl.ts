// kubectl on the suite's cluster, as the user runs it, and the reference to an object of the manifests.
import { spawnSync } from "node:child_process";
import type { KubeObject } from "../../shared/kube/client.ts";

/** Runs `kubectl --kubeconfig=KUBECONFIG ...args` (with `input` on stdin); its stdout, or an error naming the command. */
export function kubectlRun(kubectl: string, kubeconfig: string, args: string[], input?: string): string {
  const r = spawnSync(kubectl, [`--kubeconfig=${kubeconfig}`, ...args], { encoding: "utf8", input });
  if (r.error) throw new Error(`${kubectl}: ${r.error.message} (set KUBECTL to a kubectl binary)`);
  if (r.status !== 0) throw new Error(`kubectl ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** The reference the adapter reads an object by. */
export const ref = (o: KubeObject) => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  name: o.metadata.name,
  ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
});
