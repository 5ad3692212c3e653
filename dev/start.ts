/**
 * `npm start` / `poolrelay start`: the whole product on one machine, on the real Knative Eventing.
 * A local control plane (profile knative), the product installed from knative/ as a user installs
 * it, a tap on its Broker for `poolrelay record`, and the samples; then it shows every Knative
 * piece Ready, the DynamoPoolRelay going Ready, and each function invocation as it happens, until
 * Ctrl-C, which stops everything it started. The npm script execs this process (no shell between),
 * so a signal npm passes on reaches it; a shell would hold SIGINT until its child ends.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { KubeClient, KubeObject } from "../shared/kube/client.ts";
import { onParentGone } from "./parent-watch.ts";
import { ensureBinaries } from "./control-plane/binaries.ts";
import { startControlPlane, type ControlPlane } from "./control-plane/index.ts";
import { workloadStates } from "./knative/index.ts";
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
  const objects = readdirSync(join(root, "samples")).filter((f) => f.endsWith(".yaml")).sort().flatMap((f) => readObjects(join(root, "samples", f)));
  const namespaces = [...new Set(objects.map((o) => o.metadata.namespace ?? "default"))];
  for (const name of namespaces) await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name } }, MANAGER);
  const ordered = [...objects.filter((o) => o.kind === "DynamoPoolRelay"), ...objects.filter((o) => o.kind !== "DynamoPoolRelay")];
  for (const obj of ordered) {
    const { status, ...rest } = obj as KubeObject & { status?: unknown };
    const applied = await admin.apply<KubeObject>(rest as KubeObject, MANAGER, { force: true });
    if (status) await admin.replaceStatus({ ...applied, status });
    out(`  applied ${obj.kind} ${obj.metadata.namespace}/${obj.metadata.name}`);
  }
  return objects.filter((o) => o.kind === "DynamoPoolRelay").map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
}

type Dpr = { metadata: { namespace?: string; name: string }; status?: Record<string, any> };

function summary(dpr: Dpr): string {
  const c = (t: string) => dpr.status?.["conditions"]?.find((x: { type: string }) => x.type === t);
  const ready = c("Ready");
  return `${dpr.metadata.namespace}/${dpr.metadata.name}: Ready=${ready?.status ?? "Unknown"} (${ready?.reason ?? "-"}) replicas ${dpr.status?.["readyReplicas"] ?? 0}/${dpr.status?.["replicas"] ?? 0} endpoint ${dpr.status?.["serviceEndpoint"] ?? "-"}`;
}

/** Prints each function invocation as its process logs it (one JSON line each), from the kubelet's log files. */
function followInvocations(dir: string, out: (l: string) => void): () => void {
  const offsets = new Map<string, number>();
  const timer = setInterval(() => {
    for (const w of workloadStates(dir).filter((s) => s.workload.startsWith(`KnativeService ${PRODUCT_NAMESPACE}/`))) {
      if (!existsSync(w.log)) continue;
      const from = offsets.get(w.log) ?? 0;
      if (statSync(w.log).size <= from) continue;
      const fresh = readFileSync(w.log).subarray(from);
      const complete = fresh.lastIndexOf(0x0a) + 1;
      offsets.set(w.log, from + complete);
      for (const line of fresh.subarray(0, complete).toString("utf8").split("\n").filter((l) => l.startsWith("{"))) {
        const l = JSON.parse(line);
        const key = l.key ? `${l.key.namespace}/${l.key.name}` : (l.event?.subject ?? "");
        out(`  [${l.function}] ${l.event?.type ?? ""} ${key} -> ${l.decision ?? l.error ?? ""} (${l.reads} reads, ${l.writes} writes, ${l.ms} ms)`);
      }
    }
  }, 250);
  return () => clearInterval(timer);
}

export async function start(options: StartOptions): Promise<void> {
  const { out } = options;
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
    out("\nstopping: Knative, the functions and the control plane... (Ctrl-C again to stop at once)");
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
    // 1. The functions' bundles (the local kubelet runs the Knative Services from them), then a cluster with Knative Eventing.
    const build = spawnSync(process.execPath, ["scripts/build-functions.ts"], { cwd: root, encoding: "utf8" });
    if (build.status !== 0) throw new Error(`building the function bundles failed:\n${build.stdout}${build.stderr}`);
    out("starting a local control plane with Knative Eventing (etcd, kube-apiserver, controller-manager, scheduler, kwok, Knative)");
    out("  a first run builds these from Go modules: expect several minutes, with progress below");
    const started = Date.now();
    const cp: ControlPlane = await startControlPlane({ profile: "knative", ownerPid: process.pid, log: (l) => out(`  ${l}`) });
    stops.push(() => cp.stop());
    out(`control plane up in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const admin = cp.client;

    // 2. The product, as `kubectl apply -k knative/`, and a tap on its Broker.
    out("installing knative/ (kubectl apply -k knative/)");
    // Found once, now: the lookup runs the build script, which a Ctrl-C would also hit.
    const kubectl = ensureBinaries().kubectl;
    const objects = await installProduct(admin, kubectl, MANAGER);
    const tap = await startTap();
    stops.push(() => tap.close());
    await admin.apply(tapTrigger(TAP_TRIGGER, PRODUCT_NAMESPACE, BROKER, tap.sink), MANAGER, { force: true });
    const deadline = Date.now() + 120_000;
    for (;;) {
      const readiness = await productReadiness(admin, objects);
      if (readiness.every((r) => r.ready)) {
        for (const r of readiness) out(`  ${r.object}: ${r.detail}`);
        break;
      }
      if (Date.now() > deadline) throw new Error(`not Ready in 2 minutes:\n${readiness.filter((r) => !r.ready).map((r) => `  ${r.object}: ${r.detail}`).join("\n")}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    out(`Knative and the product Ready ${((Date.now() - started) / 1000).toFixed(1)} s after start; processes on this host:`);
    for (const w of workloadStates(cp.dir)) out(`  ${w.workload} (${w.program}, pid ${w.pid ?? "-"}): ${w.state}`);
    const ingress = workloadStates(cp.dir).find((w) => w.workload === "Deployment knative-eventing/mt-broker-ingress")!;
    const brokerUrl = `http://127.0.0.1:${ingress.ports["8080"]}/${PRODUCT_NAMESPACE}/${BROKER}`;
    mkdirSync(dirname(startStateFile()), { recursive: true });
    writeFileSync(startStateFile(), JSON.stringify({ kubeconfig: cp.kubeconfig, tap: tap.url, broker: brokerUrl, pid: process.pid }, null, 2));
    out(`Broker ingress ${brokerUrl} (poolrelay replay --to it); Broker tap ${tap.url} (poolrelay record)`);
    stops.push(followInvocations(cp.dir, out));

    // 3. The samples, and the first DynamoPoolRelay going Ready.
    if (options.samples) {
      out("installing samples/");
      const keys = await installSamples(admin, out);
      const [namespace, name] = keys.find((k) => k.endsWith("/llama"))!.split("/") as [string, string];
      out(`waiting for ${namespace}/${name} to go Ready`);
      const readyBy = Date.now() + 180_000;
      for (;;) {
        const dpr = await admin.get<Dpr>({ apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", namespace, name });
        if (dpr?.status?.["conditions"]?.some((c: { type: string; status: string }) => c.type === "Ready" && c.status === "True")) {
          out(`READY ${summary(dpr)}`);
          break;
        }
        if (Date.now() > readyBy) throw new Error(`${namespace}/${name} did not go Ready in 3 minutes: ${dpr ? summary(dpr) : "not found"}`);
        await new Promise((r) => setTimeout(r, 500));
      }
      const pods = await admin.list<{ metadata: { name: string }; status?: { podIP?: string; conditions?: { type: string; status: string }[] } }>("v1", "Pod", namespace, `app.kubernetes.io/instance=${name}`);
      for (const p of pods) out(`  pod ${p.metadata.name} ${p.status?.podIP ?? ""} Ready=${p.status?.conditions?.find((c) => c.type === "Ready")?.status ?? "Unknown"}`);
      for (const key of keys) {
        const [ns, n] = key.split("/") as [string, string];
        const dpr = await admin.get<Dpr>({ apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", namespace: ns, name: n });
        if (dpr) out(`  ${summary(dpr)}`);
      }
    }
    out("");
    out("reconciling; look around with:");
    out(`  export KUBECONFIG=${cp.kubeconfig}`);
    out(`  alias kubectl=${kubectl}   # if you have no kubectl; this one was built with the control plane`);
    out("  kubectl get dpr -A -o wide");
    out("  kubectl get deploy,svc,endpointslices,cm -n inference -l app.kubernetes.io/managed-by=dynamo-pool-relay");
    out("  kubectl get brokers,triggers,apiserversources,containersources,pingsources,sinkbindings -n dynamo-system");
    out(`  logs of every Knative and function process: ${cp.dir}/workloads/`);
    out("Ctrl-C stops everything");
    await new Promise(() => {});
  } catch (err) {
    await shutdown();
    throw err;
  }
}
