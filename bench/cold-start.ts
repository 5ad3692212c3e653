// Cold start of a bundled function as a process on this host (a micro-benchmark of the process
// alone, no pod, no Knative): spawn to listening (the port accepts connections), then the first
// event to its answer, and RSS after it, under the memory limit of the function's Service.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { connect as connectSocket } from "node:net";
import { join } from "node:path";
import { parse } from "yaml";
import { freePort } from "../dev/control-plane/ports.ts";
import type { ControlPlane } from "../dev/control-plane/index.ts";
import { PRODUCT_NAMESPACE } from "../dev/product.ts";
import { toBinary, type CloudEvent } from "../shared/cloudevent.ts";
import { commandIn, memoryCgroup } from "./memory-cgroup.ts";
import { serviceMemoryLimit } from "./memory-limit.ts";
import { procStatusMiB, sleep } from "./pipeline-support.ts";

export interface ColdStart {
  listenMs: number;
  eventMs: number;
  rssMb: number;
  status: number;
}

/**
 * A kubeconfig with a fresh token of the function's ServiceAccount: its own rights, as in its pod.
 * JSON, so that the function loads no YAML parser, as light as the token a kubelet mounts
 * (shared/kube/credentials.ts).
 */
export async function serviceAccountKubeconfig(cp: ControlPlane, serviceAccount: string): Promise<string> {
  const r = (await cp.client.request(
    "POST",
    `/api/v1/namespaces/${PRODUCT_NAMESPACE}/serviceaccounts/${serviceAccount}/token`,
    {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: { expirationSeconds: 3600 },
    },
  )) as { status: { token: string } };
  const ca = (
    parse(readFileSync(cp.kubeconfig, "utf8")) as { clusters: { cluster: { "certificate-authority": string } }[] }
  ).clusters[0]!.cluster["certificate-authority"];
  const file = join(cp.dir, `sa.${serviceAccount}.kubeconfig`);
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      "current-context": "pod",
      clusters: [{ name: "local", cluster: { server: cp.server, "certificate-authority": ca } }],
      users: [{ name: serviceAccount, user: { token: r.status.token } }],
      contexts: [{ name: "pod", context: { cluster: "local", user: serviceAccount, namespace: PRODUCT_NAMESPACE } }],
    }),
    { mode: 0o600 },
  );
  return file;
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connectSocket(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });

/**
 * One cold start of `main` serving `source` as `target`, with `kubeconfig`. Runs under the memory
 * limit of the function's Service (the empty function: the functions' own), as in its pod: V8
 * sizes its heap from it. Where no cgroup can be made, `limitNotes` gets why and it runs unlimited.
 * The wrapping shell costs every case alike.
 */
export async function coldStart(
  target: string,
  main: string,
  source: string,
  event: CloudEvent,
  kubeconfig: string,
  limitNotes: Set<string>,
): Promise<ColdStart> {
  const port = await freePort();
  const cgroup = memoryCgroup(serviceMemoryLimit(target === "empty" ? "eligibility" : target).bytes);
  if ("why" in cgroup) limitNotes.add(cgroup.why);
  const { command, args } = commandIn(cgroup, [
    process.execPath,
    main,
    `--target=${target}`,
    `--source=${source}`,
    `--port=${port}`,
  ]);
  let child: ChildProcess;
  try {
    child = spawn(command, args, {
      env: { ...process.env, KUBECONFIG: kubeconfig, NODE_ENV: "production", K_SINK: "http://127.0.0.1:9/" },
      stdio: ["ignore", "ignore", "inherit"],
    });
  } catch (err) {
    if ("remove" in cgroup) cgroup.remove();
    throw err;
  }
  const exited = new Promise((r) => child.once("exit", r));
  const started = performance.now();
  try {
    while (!(await accepts(port))) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`${target} exited before it listened (${child.exitCode ?? child.signalCode})`);
      await sleep(2);
    }
    const listening = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", ...toBinary(event) });
    await res.arrayBuffer();
    const rss = procStatusMiB(child.pid!, "VmRSS")!;
    return { listenMs: listening - started, eventMs: performance.now() - listening, rssMb: rss, status: res.status };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
    if ("remove" in cgroup) cgroup.remove();
  }
}
