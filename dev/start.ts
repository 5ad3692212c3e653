/**
 * `npm start` / `poolrelay start`: the whole product on one machine. A local control plane (or
 * --kubeconfig's cluster), the functions on local ports, the local router standing in for Knative
 * Eventing (sources, Broker, Triggers) and the samples; then it shows the DynamoPoolRelay going
 * Ready and keeps reconciling until Ctrl-C, which stops everything it started.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { KubeClient, connect, type KubeObject } from "../shared/kube/client.ts";
import { ensureBinaries } from "./control-plane/binaries.ts";
import { startControlPlane, type ControlPlane } from "./control-plane/index.ts";
import { installProductRbac, PRODUCT_NAMESPACE, startPipeline } from "./pipeline.ts";
import { apiServerSourceResources, runApiServerSource, runPingSource } from "./router/sources.ts";
import { startTap } from "./tap.ts";
import { readObjects } from "./yaml.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const MANAGER = "dynamo-pool-relay/start";
const SOURCE_SA = `system:serviceaccount:${PRODUCT_NAMESPACE}:poolrelay-apiserversource`;

export function startStateFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(env["XDG_CACHE_HOME"] ?? join(homedir(), ".cache"), "dynamo-pool-relay", "start.json");
}

export interface StartOptions {
  kubeconfig?: string;
  samples: boolean;
  out: (line: string) => void;
}

/** The ApiServerSource's own RBAC from knative/apiserversource.yaml, so the local source runs as it would. */
async function installSourceRbac(admin: KubeClient): Promise<void> {
  for (const obj of readObjects(join(root, "knative/apiserversource.yaml"))) {
    if (obj.kind !== "ApiServerSource") await admin.apply(obj, MANAGER, { force: true });
  }
}

/** DynamoPoolRelays first, so the DGDs' ADDED events find them; DGD status as the Dynamo operator would write it. */
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

function summary(dpr: { metadata: { namespace?: string; name: string }; status?: Record<string, any> }): string {
  const c = (t: string) => dpr.status?.["conditions"]?.find((x: { type: string }) => x.type === t);
  const ready = c("Ready");
  return `${dpr.metadata.namespace}/${dpr.metadata.name}: Ready=${ready?.status ?? "Unknown"} (${ready?.reason ?? "-"}) replicas ${dpr.status?.["readyReplicas"] ?? 0}/${dpr.status?.["replicas"] ?? 0} endpoint ${dpr.status?.["serviceEndpoint"] ?? "-"}`;
}

/** An existing cluster must serve what the functions and the ApiServerSource stand-in read. */
async function checkCluster(admin: KubeClient): Promise<void> {
  const crd = (name: string) => admin.get<{ spec: { versions: { name: string; served: boolean }[] } }>({ apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", name });
  if (!(await crd("dynamopoolrelays.nvidia.com"))) throw new Error("the cluster has no DynamoPoolRelay CRD: install it with kubectl apply -f crds/");
  const dgd = await crd("dynamographdeployments.nvidia.com");
  const wanted = apiServerSourceResources().find((r) => r.kind === "DynamoGraphDeployment")!.apiVersion.split("/")[1];
  if (!dgd?.spec.versions.some((v) => v.name === wanted && v.served)) {
    throw new Error(`the cluster does not serve DynamoGraphDeployment ${wanted}: the Dynamo operator is missing or older (then set DGD_API_VERSION and the ApiServerSource's apiVersion to nvidia.com/v1alpha1)`);
  }
}

export async function start(options: StartOptions): Promise<void> {
  const { out } = options;
  const stops: (() => Promise<void>)[] = [];
  const abort = new AbortController();
  let cp: ControlPlane | undefined;
  let stopped: Promise<void> | undefined;
  const shutdown = () =>
    (stopped ??= (async () => {
      abort.abort();
      for (const stop of [...stops].reverse()) await stop().catch(() => {});
      rmSync(startStateFile(), { force: true });
    })());
  const onSignal = () => {
    if (stopped) {
      // A second Ctrl-C: stop now; the control plane's exit hook still kills its processes.
      out("stopping at once");
      process.exit(130);
    }
    out("\nstopping: functions, router and control plane... (Ctrl-C again to stop at once)");
    void shutdown().then(() => {
      out("stopped");
      process.exit(0);
    });
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  try {
    // 1. A cluster.
    let kubeconfig = options.kubeconfig;
    if (!kubeconfig) {
      out("starting a local control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok)");
      out("  a first run builds these from Go modules: expect several minutes, with progress below");
      const started = Date.now();
      cp = await startControlPlane({ profile: "full", ownerPid: process.pid, log: (l) => out(`  ${l}`) });
      stops.push(() => cp!.stop());
      kubeconfig = cp.kubeconfig;
      out(`control plane up in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
    const admin = new KubeClient(await connect(kubeconfig));
    const local = cp !== undefined;
    if (!local) await checkCluster(admin);
    if (local) {
      await installProductRbac(admin, MANAGER);
      await installSourceRbac(admin);
    }

    // 2. The functions behind the local router, and the sources that feed it.
    const tap = await startTap();
    stops.push(() => tap.close());
    const pipeline = await startPipeline({
      kubeconfig,
      impersonate: local,
      onEvent: (e) => tap.publish(e),
      log: (line) => {
        const l = JSON.parse(line);
        const key = l.key ? `${l.key.namespace}/${l.key.name}` : (l.event?.subject ?? "");
        out(`  [${l.function}] ${l.event?.type ?? ""} ${key} -> ${l.decision ?? l.error ?? ""} (${l.reads} reads, ${l.writes} writes, ${l.ms} ms)`);
      },
    });
    stops.push(() => pipeline.stop());
    const sourceClient = local ? admin.as(SOURCE_SA) : admin;
    const watch = runApiServerSource(sourceClient, (e) => pipeline.broker.accept(e), abort.signal, (l) => out(`  [apiserversource] ${l}`));
    void runPingSource((e) => pipeline.broker.accept(e), abort.signal);
    await watch.ready;
    mkdirSync(dirname(startStateFile()), { recursive: true });
    writeFileSync(startStateFile(), JSON.stringify({ kubeconfig, tap: tap.url, ingress: pipeline.sink, pid: process.pid }, null, 2));
    out(`functions: ${Object.entries(pipeline.urls).map(([n, u]) => `${n} ${u}`).join(", ")}`);
    out(`router ingress ${pipeline.sink} (replay events here); event tap ${tap.url} (poolrelay record)`);

    // 3. The samples, and the first DynamoPoolRelay going Ready.
    if (options.samples) {
      out("installing samples/");
      const keys = await installSamples(admin, out);
      const [namespace, name] = keys.find((k) => k.endsWith("/llama"))!.split("/") as [string, string];
      out(`waiting for ${namespace}/${name} to go Ready (DynamoPoolRelay changes are picked up by DGD events and the minute resync)`);
      const deadline = Date.now() + 180_000;
      for (;;) {
        const dpr = await admin.get<{ metadata: { namespace: string; name: string }; status?: Record<string, any> }>({ apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", namespace, name });
        if (dpr?.status?.["conditions"]?.some((c: { type: string; status: string }) => c.type === "Ready" && c.status === "True")) {
          out(`READY ${summary(dpr)}`);
          break;
        }
        if (Date.now() > deadline) throw new Error(`${namespace}/${name} did not go Ready in 3 minutes: ${dpr ? summary(dpr) : "not found"}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
      const pods = await admin.list<{ metadata: { name: string }; status?: { podIP?: string; conditions?: { type: string; status: string }[] } }>("v1", "Pod", namespace, `app.kubernetes.io/instance=${name}`);
      for (const p of pods) out(`  pod ${p.metadata.name} ${p.status?.podIP ?? ""} Ready=${p.status?.conditions?.find((c) => c.type === "Ready")?.status ?? "Unknown"}`);
      for (const key of keys) {
        const [ns, n] = key.split("/") as [string, string];
        const dpr = await admin.get<{ metadata: { namespace: string; name: string }; status?: Record<string, any> }>({ apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", namespace: ns, name: n });
        if (dpr) out(`  ${summary(dpr)}`);
      }
    }
    out("");
    out("reconciling; look around with:");
    out(`  export KUBECONFIG=${kubeconfig}`);
    if (local) out(`  alias kubectl=${ensureBinaries().kubectl}   # if you have no kubectl; this one was built with the control plane`);
    out("  kubectl get dpr -A -o wide");
    out("  kubectl get deploy,svc,endpointslices,cm -n inference -l app.kubernetes.io/managed-by=dynamo-pool-relay");
    out("Ctrl-C stops everything");
    await watch.done;
  } catch (err) {
    await shutdown();
    throw err;
  }
}
