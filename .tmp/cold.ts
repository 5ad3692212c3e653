// Throwaway: first-event cost of the status bundle against a local API server, spawned N times.
import { spawn } from "node:child_process";
import { connect as connectSocket } from "node:net";
import { startControlPlane } from "../dev/control-plane/index.ts";
import { freePort } from "../dev/control-plane/ports.ts";
import { toBinary } from "../shared/cloudevent.ts";
import { EventType, productEvent } from "../shared/events.ts";

const N = Number(process.env["N"] ?? 9);
const extra = (process.env["NODE_EXTRA"] ?? "").split(" ").filter(Boolean);
const target = process.env["TARGET"] ?? "status";
const cp = await startControlPlane({ profile: "api", ownerPid: process.pid });
const ns = "default";
const { parse } = await import("yaml");
const { readFileSync, writeFileSync } = await import("node:fs");
const jsonConfig = `${cp.dir}/admin.json.kubeconfig`;
writeFileSync(jsonConfig, JSON.stringify(parse(readFileSync(cp.kubeconfig, "utf8"))));
await cp.client.apply({ apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment", metadata: { name: "g1", namespace: ns }, spec: { components: [{ name: "decode", type: "decode" }] } } as never, "t", { force: true });
await cp.client.apply({ apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", metadata: { name: "g1", namespace: ns }, spec: { image: "relay:1", clusterID: "b" } } as never, "t", { force: true });
const time = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
const ev = target === "status"
  ? productEvent(EventType.Applied, { namespace: ns, name: "g1", uid: "u", generation: 1, applied: [], unchanged: [], skipped: [] }, { source: "/b", cause: "c", time: time() })
  : productEvent(EventType.Reconcile, { namespace: ns, name: "g1", cause: "DGDChanged" }, { source: "/b", cause: "c", time: time() });
const accepts = (port: number) => new Promise<boolean>((resolve) => { const s = connectSocket(port, "127.0.0.1"); s.once("connect", () => (s.destroy(), resolve(true))); s.once("error", () => resolve(false)); });
const out: number[] = []; const listen: number[] = [];
for (let i = 0; i < N; i++) {
  const port = await freePort();
  const child = spawn(process.execPath, [...extra, "dist/functions/main.mjs", `--target=${target}`, `--source=dist/functions/${target}/index.mjs`, `--port=${port}`], { env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !(process.env["UNSET"] ?? "").split(",").includes(k))), KUBECONFIG: jsonConfig, NODE_ENV: "production", K_SINK: "http://127.0.0.1:9/" }, stdio: ["ignore", "ignore", "inherit"] });
  const t0 = performance.now();
  while (!(await accepts(port))) await new Promise((r) => setTimeout(r, 2));
  const t1 = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", ...toBinary(ev) }); await res.text();
  out.push(performance.now() - t1); listen.push(t1 - t0);
  child.kill(process.env["SIG"] as NodeJS.Signals ?? "SIGINT"); await new Promise((r) => child.once("exit", r));
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(JSON.stringify({ target, extra, listen: Math.round(med(listen)), firstEvent: Math.round(med(out)), all: out.map(Math.round) }));
await cp.stop();
process.exit(0);
