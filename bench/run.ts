// npm run bench: cold start of each bundled function next to an empty Functions Framework
// function, and Kubernetes API requests per event for the main scenarios, on a local control
// plane. Prints Markdown tables. Numbers are measurements of this machine, never assertions.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startControlPlane } from "../dev/control-plane/index.ts";
import { freePort } from "../dev/control-plane/ports.ts";
import { apiServerEvent } from "../dev/router/apiserver-events.ts";
import { startPipeline } from "../dev/pipeline.ts";
import { toBinary, type CloudEvent } from "../shared/cloudevent.ts";
import { EventType, productEvent } from "../shared/events.ts";
import type { KubeObject } from "../shared/kube/client.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const RUNS = Number(process.env["BENCH_RUNS"] ?? 5);
const MANAGER = "dynamo-pool-relay/bench";
const ff = `${root}node_modules/@google-cloud/functions-framework/build/src/main.js`;
const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const cp = await startControlPlane({ profile: "api", ownerPid: process.pid });
try {
  const admin = cp.client;
  const ns = "bench";
  await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }, MANAGER);
  const dgd = (name: string): KubeObject => ({
    apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment", metadata: { name, namespace: ns },
    spec: { components: [{ name: "decode", type: "decode" }] },
  });
  const dpr = (name: string): KubeObject => ({ apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", metadata: { name, namespace: ns }, spec: { image: "relay:1", clusterID: "bench" } });
  const watch = (type: "ADDED" | "MODIFIED", obj: KubeObject) => apiServerEvent(type, obj, cp.server, `w-${Math.random()}`, now());

  // 1. Cold start: process spawn to the first handled event, and RSS after it.
  async function coldStart(target: string, source: string, event: CloudEvent): Promise<{ ms: number; rssMb: number; status: number }> {
    const port = await freePort();
    const child = spawn(process.execPath, [ff, `--target=${target}`, `--source=${source}`, `--port=${port}`], {
      env: { ...process.env, KUBECONFIG: cp.kubeconfig, NODE_ENV: "production", K_SINK: "http://127.0.0.1:9/" },
      stdio: ["ignore", "ignore", "inherit"],
    });
    const started = performance.now();
    const { headers, body } = toBinary(event);
    try {
      for (;;) {
        try {
          const res = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", headers, body });
          await res.arrayBuffer();
          const ms = performance.now() - started;
          const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))![1]) / 1024;
          return { ms, rssMb: rss, status: res.status };
        } catch {
          await new Promise((r) => setTimeout(r, 5));
        }
      }
    } finally {
      child.kill("SIGKILL");
    }
  }

  await admin.apply(dgd("cold"), MANAGER);
  await admin.apply(dpr("cold"), MANAGER);
  const coldDgd = (await admin.get<KubeObject>({ apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment", namespace: ns, name: "cold" }))!;
  const reconcile = productEvent(EventType.Reconcile, { namespace: ns, name: "cold", cause: "DGDChanged" }, { source: "/bench", cause: "c", time: now() });
  const applied = productEvent(EventType.Applied, { namespace: ns, name: "cold", uid: "u", generation: 1, applied: [], unchanged: [], skipped: [] }, { source: "/bench", cause: "c", time: now() });
  const cases: [string, string, string, CloudEvent][] = [
    ["empty Functions Framework function", "empty", `${root}bench/empty.mjs`, reconcile],
    ["eligibility (DGD event)", "eligibility", `${root}dist/functions/eligibility/index.mjs`, watch("MODIFIED", coldDgd)],
    ["apply (reconcile request)", "apply", `${root}dist/functions/apply/index.mjs`, reconcile],
    ["status (applied report)", "status", `${root}dist/functions/status/index.mjs`, applied],
  ];
  const coldRows: string[] = [];
  for (const [label, target, source, event] of cases) {
    const runs = [];
    for (let i = 0; i < RUNS; i++) runs.push(await coldStart(target, source, event));
    const statuses = [...new Set(runs.map((r) => r.status))].join("/");
    coldRows.push(`| ${label} | ${Math.round(median(runs.map((r) => r.ms)))} | ${Math.round(Math.min(...runs.map((r) => r.ms)))}–${Math.round(Math.max(...runs.map((r) => r.ms)))} | ${Math.round(median(runs.map((r) => r.rssMb)))} | ${statuses} |`);
  }

  // 2. API requests per event: the whole chain an event sets off, summed over the functions.
  const logs: Record<string, number | string>[] = [];
  const pipeline = await startPipeline({ kubeconfig: cp.kubeconfig, impersonate: false, log: (l) => logs.push(JSON.parse(l)) });
  async function measure(label: string, act: () => Promise<void>) {
    const from = logs.length;
    await act();
    await pipeline.broker.idle();
    const slice = logs.slice(from);
    const per = (fn: string) => slice.filter((l) => l["function"] === fn);
    const cell = (fn: string) => `${per(fn).reduce((n, l) => n + Number(l["reads"]), 0)} / ${per(fn).reduce((n, l) => n + Number(l["writes"]), 0)}`;
    const total = slice.reduce((n, l) => n + Number(l["reads"]) + Number(l["writes"]), 0);
    const writes = slice.reduce((n, l) => n + Number(l["writes"]), 0);
    return `| ${label} | ${cell("eligibility")} | ${cell("apply")} | ${cell("status")} | ${total} | ${writes} |`;
  }
  await admin.apply(dgd("g1"), MANAGER);
  await admin.apply(dpr("g1"), MANAGER);
  const dgdRef = { apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment", namespace: ns, name: "g1" };
  const apiRows = [
    await measure("publish (DGD added, new DynamoPoolRelay)", async () => pipeline.broker.publish(watch("ADDED", (await admin.get<KubeObject>(dgdRef))!))),
    await measure("no-op (the same DGD event again)", async () => pipeline.broker.publish(watch("MODIFIED", (await admin.get<KubeObject>(dgdRef))!))),
    await measure("worker-namespace change (DGD rollout)", async () => {
      const live = (await admin.get<KubeObject>(dgdRef))!;
      await admin.replaceStatus({ ...live, status: { components: { decode: { componentNames: ["g1-decode-aaaa1111", "g1-decode-bbbb2222"] } } } });
      await pipeline.broker.publish(watch("MODIFIED", (await admin.get<KubeObject>(dgdRef))!));
    }),
  ];
  await pipeline.stop();

  console.log(`\nCold start to the first handled event (${RUNS} runs each, median; Node ${process.version}; bundles from npm run build)\n`);
  console.log("| function | median ms | range ms | RSS MB | HTTP status |\n|---|---|---|---|---|");
  console.log(coldRows.join("\n"));
  console.log("\nKubernetes API requests per event, over the whole chain it sets off (reads / writes)\n");
  console.log("| scenario | eligibility | apply | status | requests | writes |\n|---|---|---|---|---|---|");
  console.log(apiRows.join("\n"));
} finally {
  await cp.stop();
}
