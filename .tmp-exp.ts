import { spawn } from "node:child_process";
import { connect } from "node:net";
import { rmSync } from "node:fs";
import { startControlPlane } from "./dev/control-plane/index.ts";
import { freePort } from "./dev/control-plane/ports.ts";
import { toBinary } from "./shared/cloudevent.ts";
import { EventType, productEvent } from "./shared/events.ts";
const root = "/work/main/";
const cp = await startControlPlane({ profile: "api", ownerPid: process.pid, log: () => {} });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const accepts = (port: number) => new Promise<boolean>((r) => { const s = connect(port, "127.0.0.1"); s.once("connect", () => (s.destroy(), r(true))); s.once("error", () => r(false)); });
const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
try {
  const a = cp.client;
  await a.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: "x" } }, "t");
  await a.apply({ apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment", metadata: { name: "g1", namespace: "x" }, spec: { components: [{ name: "decode", type: "decode" }] } } as any, "t");
  await a.apply({ apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", metadata: { name: "g1", namespace: "x" }, spec: { image: "relay:1", clusterID: "bench" } } as any, "t");
  const resync = productEvent(EventType.Reconcile, { namespace: "x", name: "g1", cause: "Resync" }, { source: "/bench", cause: "c", time: now() });
  const applied = productEvent(EventType.Applied, { namespace: "x", name: "g1", uid: "u", generation: 1, applied: [], unchanged: [], skipped: [] }, { source: "/bench", cause: "c", time: now() });
  async function cold(target: string, event: any, env: Record<string, string> = {}, flush = false) {
    const port = await freePort();
    const child = spawn(process.execPath, [`${root}dist/functions/main.mjs`, `--target=${target}`, `--source=${root}dist/functions/${target}/index.mjs`, `--port=${port}`], { env: { ...process.env, KUBECONFIG: cp.kubeconfig, NODE_ENV: "production", K_SINK: "http://127.0.0.1:9/", ...env }, stdio: ["ignore", "ignore", "inherit"] });
    const t = performance.now();
    while (!(await accepts(port))) await sleep(2);
    const l = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", ...toBinary(event) });
    await res.arrayBuffer();
    const e = performance.now();
    if (flush) { child.kill("SIGUSR2"); await new Promise((r) => child.once("exit", r)); } else child.kill("SIGKILL");
    return { listen: l - t, event: e - l, status: res.status };
  }
  await cold("apply", resync);
  await cold("apply", resync);
  rmSync("/tmp/exp/prof", { recursive: true, force: true });
  for (let k = 0; k < 3; k++) {
    const r = await cold("status", applied, { NODE_OPTIONS: "--import=/tmp/exp/flush-on-signal.mjs --cpu-prof --cpu-prof-dir=/tmp/exp/prof --cpu-prof-interval=200" }, true);
    console.log(r);
  }
} finally { await cp.stop(); }
