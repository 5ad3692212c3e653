/**
 * The local pod host, one process of the local control plane (profile `knative`): the cluster
 * address proxy and the local kubelet. It runs in its own process group with every process it
 * starts, so stopping the control plane (or its watchdog) stops them all.
 *
 * node dev/knative/host-main.ts --dir DIR --kubeconfig FILE --server URL --ca FILE --bin KNATIVE_BIN [--product-server URL]
 *
 * Writes DIR/host.json ({"proxy": "http://127.0.0.1:PORT"}) once it serves, DIR/workloads.json on
 * every change, and one line per refused address to DIR/proxy-refused.log. Injects the delivery
 * faults DIR/delivery-faults.json asks for (the fault suite's; see delivery-faults.ts).
 */
import { appendFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { KubeClient, connect } from "../../shared/kube/client.ts";
import { LocalKubelet } from "./kubelet.ts";
import { programFor, type ProductImage } from "./programs.ts";
import { DeliveryFaults } from "./delivery-faults.ts";
import { ClusterProxy, parseServiceHost, type Upstream } from "./proxy.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** The product's one image (see the Dockerfile): its entry point serving the bundles in dist/ with the Functions Framework. */
const PRODUCT_IMAGES: ProductImage[] = [{
  name: "dynamo-pool-relay",
  program: {
    name: "functions-framework",
    command: [process.execPath, join(root, "dist/functions/main.mjs")],
    portEnv: {},
    fixedPorts: [],
    go: false,
    // The image's WORKDIR /app holds dist/functions as /app/functions.
    paths: { "/app/functions/": join(root, "dist/functions/") },
    cwd: root,
  },
}];

interface ServiceSpec {
  spec?: { type?: string; externalName?: string; selector?: Record<string, string>; ports?: { port: number; targetPort?: number | string }[] };
}

const { values } = parseArgs({
  options: { dir: { type: "string" }, kubeconfig: { type: "string" }, server: { type: "string" }, ca: { type: "string" }, bin: { type: "string" }, "product-server": { type: "string" } },
});
const { dir, kubeconfig, server, ca, bin, "product-server": productServer } = values as Record<string, string>;
if (!dir || !kubeconfig || !server || !ca || !bin) throw new Error("host-main needs --dir, --kubeconfig, --server, --ca and --bin");
const log = (line: string) => process.stdout.write(`${new Date().toISOString()} ${line}\n`);

// Stop the processes first (they may still send while they drain), then the proxy they send through.
let kubelet: LocalKubelet | undefined;
let proxy: ClusterProxy | undefined;
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void (kubelet?.close() ?? Promise.resolve()).then(() => proxy?.close()).finally(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
const admin = new KubeClient(await connect(kubeconfig));
const apiPort = Number(new URL(server).port);

// Service lookups on the event path are cached briefly: a Service's selector and ports rarely change.
const services = new Map<string, { at: number; svc: ServiceSpec | undefined }>();
async function service(namespace: string, name: string): Promise<ServiceSpec | undefined> {
  const key = `${namespace}/${name}`;
  const hit = services.get(key);
  if (hit && Date.now() - hit.at < 5000) return hit.svc;
  const svc = await admin.get<ServiceSpec>({ apiVersion: "v1", kind: "Service", namespace, name });
  services.set(key, { at: Date.now(), svc });
  return svc;
}

async function resolve(host: string, port: number, depth = 0): Promise<Upstream | undefined> {
  const name = parseServiceHost(host);
  if (!name || depth > 3) return undefined;
  // The API server's in-cluster address (the `kubernetes` Service has no endpoints on this control plane).
  if (name.namespace === "default" && name.name === "kubernetes") return port === 443 ? { port: apiPort } : undefined;
  const svc = await service(name.namespace, name.name);
  if (svc?.spec?.type === "ExternalName" && svc.spec.externalName) return resolve(svc.spec.externalName, port, depth + 1);
  if (svc) {
    const p = svc.spec?.ports?.find((x) => x.port === port);
    const local = p ? kubelet?.endpoint(name.namespace, svc.spec?.selector, p.targetPort ?? p.port) : undefined;
    return local === undefined ? undefined : { port: local };
  }
  // No Service: a Knative Service this host runs, at the address Knative Serving would give it.
  const local = port === 80 ? kubelet?.servingEndpoint(name.namespace, name.name) : undefined;
  return local === undefined ? undefined : { port: local };
}

const refusedLog = join(dir, "proxy-refused.log");
proxy = new ClusterProxy({
  resolve: (host, port) => resolve(host, port),
  faults: new DeliveryFaults(join(dir, "delivery-faults.json")),
  onRefused: (address, why) => {
    log(`proxy refused ${address}: ${why}`);
    appendFileSync(refusedLog, `${new Date().toISOString()} ${address} ${why}\n`);
  },
});
const proxyPort = await proxy.listen();
kubelet = new LocalKubelet({
  admin, server, caFile: ca, dir, proxyUrl: `http://127.0.0.1:${proxyPort}`, log,
  serverFor: (program) => (productServer && PRODUCT_IMAGES.some((p) => p.program === program) ? productServer : server),
  programFor: (image) => programFor(image, bin, PRODUCT_IMAGES),
});
await kubelet.start();
writeFileSync(join(dir, "host.json.tmp"), JSON.stringify({ proxy: `http://127.0.0.1:${proxyPort}`, pid: process.pid }));
renameSync(join(dir, "host.json.tmp"), join(dir, "host.json"));
log(`serving: proxy on 127.0.0.1:${proxyPort}`);

