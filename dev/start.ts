/**
 * `npm start` / `poolrelay start`: the whole product on one machine, as it runs on a cluster. A
 * local control plane with a real node (profile node: kubelet, containerd, Knative Serving and
 * Eventing and Traefik as pods), the product installed from knative/ as a user installs it, a tap
 * on its Broker for `poolrelay record`, and the samples; then it shows every Knative piece Ready,
 * the samples' DynamoPoolRelays reconciled, and each function invocation as it happens (from the
 * node's log agent, which keeps every container's log after its pod goes), until Ctrl-C, which
 * stops everything it started. The npm script execs this process (no shell between), so a signal
 * npm passes on reaches it; a shell would hold SIGINT until its child ends.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { KubeClient, KubeObject } from "../shared/kube/client.ts";
import { onParentGone } from "./parent-watch.ts";
import { ensureBinaries } from "./control-plane/binaries.ts";
import { startControlPlane, type ControlPlane } from "./control-plane/index.ts";
import { followPodLogs, type ContainerLog } from "./node/pod-logs.ts";
import { clusterUrlFromHost, productOnNode, relayOnNode } from "./node/product-services.ts";
import { installProduct, PRODUCT_NAMESPACE, productReadiness } from "./product.ts";
import { startTap, tapTrigger } from "./tap.ts";
import { readObjects } from "./yaml.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const MANAGER = "dynamo-pool-relay/start";
const BROKER = "dynamo-pool-relay";
const TAP_TRIGGER = "poolrelay-tap";

export function startStateFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(env["XDG_CACHE_HOME"] ?? join(homedir(), ".cache"), "dynamo-pool-relay", "start.json");
}

export interface StartOptions {
  samples: boolean;
  out: (line: string) => void;
}

/** DynamoPoolRelays first, then the DGDs, with the DGD status the Dynamo operator would write. */
async function installSamples(admin: KubeClient, out: (l: string) => void): Promise<string[]> {
  const objects = readdirSync(join(root, "samples"))
    .filter((f) => f.endsWith(".yaml"))
    .sort()
    .flatMap((f) => readObjects(join(root, "samples", f)));
  const namespaces = [...new Set(objects.map((o) => o.metadata.namespace ?? "default"))];
  for (const name of namespaces)
    await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name } }, MANAGER);
  // Each DynamoPoolRelay runs the real Relay, built here, in place of a runtime image not to be had here.
  const ordered = [
    ...objects.filter((o) => o.kind === "DynamoPoolRelay").map(relayOnNode),
    ...objects.filter((o) => o.kind !== "DynamoPoolRelay"),
  ];
  for (const obj of ordered) {
    const { status, ...rest } = obj as KubeObject & { status?: unknown };
    const applied = await admin.apply<KubeObject>(rest, MANAGER, { force: true });
    if (status) await admin.replaceStatus({ ...applied, status });
    out(`  applied ${obj.kind} ${obj.metadata.namespace}/${obj.metadata.name}`);
  }
  return objects.filter((o) => o.kind === "DynamoPoolRelay").map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
}

interface DprStatus {
  conditions?: { type: string; status: string; reason?: string }[];
  readyReplicas?: number;
  replicas?: number;
  serviceEndpoint?: string;
}
type Dpr = { metadata: { namespace?: string; name: string }; status?: DprStatus };

function summary(dpr: Dpr): string {
  const c = (t: string) => dpr.status?.conditions?.find((x) => x.type === t);
  const ready = c("Ready");
  return `${dpr.metadata.namespace}/${dpr.metadata.name}: Ready=${ready?.status ?? "Unknown"} (${ready?.reason ?? "-"}) replicas ${dpr.status?.readyReplicas ?? 0}/${dpr.status?.replicas ?? 0} endpoint ${dpr.status?.serviceEndpoint ?? "-"}`;
}

/** The fields of a function's log line that the summary shows. */
interface InvocationLine {
  function?: unknown;
  key?: { namespace: string; name: string };
  event?: { type?: string; subject?: string };
  decision?: string;
  error?: string;
  reads?: number;
  writes?: number;
  ms?: number;
}

/** A function's log line of one invocation (functions/runtime/serve.ts), as one line to show; undefined for any other line. */
function invocation(c: ContainerLog, text: string): string | undefined {
  // The function's container, as knative/services.yaml names it; queue-proxy beside it logs JSON too.
  if (c.namespace !== PRODUCT_NAMESPACE || c.container !== "function" || !text.startsWith("{")) return undefined;
  let l: InvocationLine;
  try {
    l = JSON.parse(text) as InvocationLine;
  } catch {
    return undefined;
  }
  if (typeof l.function !== "string") return undefined;
  const key = l.key ? `${l.key.namespace}/${l.key.name}` : (l.event?.subject ?? "");
  return `  [${l.function}] ${l.event?.type ?? ""} ${key} -> ${l.decision ?? l.error ?? ""} (${l.reads} reads, ${l.writes} writes, ${l.ms} ms)`;
}

interface Pod {
  metadata: { namespace: string; name: string };
  status?: {
    phase?: string;
    podIP?: string;
    containerStatuses?: { ready: boolean; state?: { waiting?: { reason?: string } } }[];
  };
}

function podLine(p: Pod): string {
  const containers = p.status?.containerStatuses ?? [];
  const waiting = containers.map((c) => c.state?.waiting?.reason).find(Boolean);
  return `${p.metadata.namespace}/${p.metadata.name} ${p.status?.podIP ?? "-"} ${p.status?.phase ?? "Pending"}, ${containers.filter((c) => c.ready).length}/${containers.length} ready${waiting ? ` (${waiting})` : ""}`;
}

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not in ${ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

export async function start(options: StartOptions): Promise<void> {
  const { out } = options;
  const started = Date.now();
  const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
  const stops: (() => Promise<void> | void)[] = [];
  let stopped: Promise<void> | undefined;
  const shutdown = () =>
    (stopped ??= (async () => {
      for (const stop of [...stops].reverse()) await Promise.resolve(stop()).catch(() => {});
      rmSync(startStateFile(), { force: true });
    })());
  let firstSignalAt: number | undefined;
  const onSignal = () => {
    if (stopped) {
      // Ctrl-C arrives twice under npm, from the terminal and from npm passing it on: one signal.
      // And a stop a failure began (firstSignalAt unset) is not hurried by the first signal.
      if (firstSignalAt === undefined || performance.now() - firstSignalAt < 1000) {
        firstSignalAt ??= performance.now();
        return;
      }
      // A second Ctrl-C: stop now; the control plane's exit hook still kills its processes.
      out("stopping at once");
      process.exit(130);
    }
    firstSignalAt = performance.now();
    out(
      "\nstopping: the node (its pods: Knative, the functions), then the control plane... (Ctrl-C again to stop at once)",
    );
    void shutdown().then(() => {
      out("stopped");
      process.exit(0);
    });
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  // npm killed outright passes nothing on: its going is the signal.
  if (process.env["npm_lifecycle_event"] === "start") {
    onParentGone(() => {
      if (stopped) return;
      out("\nnpm, which started this process, is gone");
      onSignal();
    });
  }

  try {
    // 1. A control plane with a real node, Knative Serving, Eventing and Traefik as pods.
    out(
      "starting a local control plane with a real node (etcd, kube-apiserver, controller-manager, scheduler; kubelet, containerd, kube-proxy, CoreDNS) and Knative Serving, Eventing and Traefik as pods",
    );
    out(
      "  a first run builds these from Go modules and their images with buildah: expect many minutes, with progress below",
    );
    const cp: ControlPlane = await startControlPlane({
      profile: "node",
      ownerPid: process.pid,
      timeoutMs: 180_000,
      log: (l) => out(`  ${l}`),
    });
    stops.push(() => cp.stop());
    out(`control plane, node and Knative up in ${seconds()} s; their logs and kubeconfig in ${cp.dir}`);
    const admin = cp.client;
    const logs = join(cp.dir, "logs");
    const podLogs = followPodLogs(join(cp.dir, "node", "pod-logs"), logs, (c, text) => {
      const line = invocation(c, text);
      if (line) out(line);
    });
    stops.push(() => podLogs.stop());

    // 2. The product, as `kubectl apply -k knative/` with the images built here, and a tap on its Broker.
    out("installing knative/ (kubectl apply -k knative/, with the images built here)");
    // Found once, now: the lookup runs the build script, which a Ctrl-C would also hit.
    const kubectl = ensureBinaries().kubectl;
    const objects = await installProduct(admin, kubectl, MANAGER, productOnNode(kubectl));
    // The Broker's filter pod delivers to the tap: it listens where pods reach the host, the API server's address.
    const tap = await startTap(() => {}, new URL(cp.server).hostname);
    stops.push(() => tap.close());
    await admin.apply(tapTrigger(TAP_TRIGGER, PRODUCT_NAMESPACE, BROKER, tap.sink), MANAGER, { force: true });
    const readiness = await until("Knative and the product Ready", 240_000, async () => {
      const r = await productReadiness(admin, objects);
      return r.every((x) => x.ready) ? r : undefined;
    }).catch(async (err: Error) => {
      const r = await productReadiness(admin, objects);
      throw new Error(
        `${err.message}:\n${r
          .filter((x) => !x.ready)
          .map((x) => `  ${x.object}: ${x.detail}`)
          .join("\n")}`,
      );
    });
    for (const r of readiness) out(`  ${r.object}: ${r.detail}`);
    out(`Knative and the product Ready ${seconds()} s after start; pods on the node:`);
    for (const p of await admin.list<Pod>("v1", "Pod", undefined)) out(`  ${podLine(p)}`);
    const broker = await admin.get<{ status?: { address?: { url?: string } } }>({
      apiVersion: "eventing.knative.dev/v1",
      kind: "Broker",
      namespace: PRODUCT_NAMESPACE,
      name: BROKER,
    });
    const brokerUrl = await clusterUrlFromHost(admin, broker!.status!.address!.url!);
    mkdirSync(dirname(startStateFile()), { recursive: true });
    writeFileSync(
      startStateFile(),
      JSON.stringify({ kubeconfig: cp.kubeconfig, tap: tap.url, broker: brokerUrl, logs, pid: process.pid }, null, 2),
    );
    out(
      `Broker ingress ${brokerUrl} (its Service's ClusterIP, routed from this host through the node: poolrelay replay --to it); Broker tap ${tap.url} (poolrelay record)`,
    );

    // 3. The samples, and the first DynamoPoolRelay published.
    if (options.samples) {
      out("installing samples/");
      const keys = await installSamples(admin, out);
      const [namespace, name] = keys.find((k) => k.endsWith("/llama"))!.split("/") as [string, string];
      out(
        `waiting for ${namespace}/${name} to be Ready: its Service published, its Relay pods Ready by their gRPC health`,
      );
      const dpr = await until(`${namespace}/${name} Ready`, 240_000, async () => {
        const got = await admin.get<Dpr>({
          apiVersion: "nvidia.com/v1alpha1",
          kind: "DynamoPoolRelay",
          namespace,
          name,
        });
        return got?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ? got : undefined;
      });
      out(`READY ${summary(dpr)}`);
      for (const p of await admin.list<Pod>("v1", "Pod", namespace, `app.kubernetes.io/instance=${name}`))
        out(`  pod ${podLine(p)}`);
      for (const key of keys) {
        const [ns, n] = key.split("/") as [string, string];
        const got = await admin.get<Dpr>({
          apiVersion: "nvidia.com/v1alpha1",
          kind: "DynamoPoolRelay",
          namespace: ns,
          name: n,
        });
        if (got) out(`  ${summary(got)}`);
      }
    }
    out("");
    out(`reconciling, ${seconds()} s after start; look around with:`);
    out(`  export KUBECONFIG=${cp.kubeconfig}`);
    out(`  alias kubectl=${kubectl}   # if you have no kubectl; this one was built with the control plane`);
    out("  kubectl get dpr -A -o wide");
    out("  kubectl get deploy,svc,endpointslices,cm -n inference -l app.kubernetes.io/managed-by=dynamo-pool-relay");
    out("  kubectl get brokers,triggers,apiserversources,pingsources,sinkbindings,ksvc,deploy -n dynamo-system");
    out("  kubectl get pods -A");
    out(
      `  logs of every container, kept after its pod goes (the functions scale to zero): ${logs}/<namespace>/<pod>/<container>.log`,
    );
    out(`  logs of the control plane's and the node's daemons: ${cp.dir}/*.log, ${cp.dir}/node/*.log`);
    out("Ctrl-C stops everything");
    await new Promise(() => {});
  } catch (err) {
    await shutdown();
    throw err;
  }
}
