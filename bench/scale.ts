// npm run bench:scale: the product's API cost at scale, on the local control plane (profile api) with
// the bundled functions as real processes (admin credentials; the sink of their replies is a local
// server that answers as the Broker's ingress does). Prints:
//   1. the API server taking SCALE_DPRS (default 10,000) DynamoPoolRelays with server-side apply,
//      and their status writes (its own rate here, 32 requests at once);
//   2. one resync tick of eligibility over them, each in a fresh process: right after they were
//      created, before any is observed (every one is asked for), and once they are converged (one
//      periodic slot is): API requests, pages, reconcile requests emitted, wall time, peak RSS;
//      and the bytes of a LIST page as objects and as the Table the tick asks for;
//   3. one converged pair reconciled again as a periodic resync does (apply, then status if apply
//      reports): API requests each;
//   4. from those, the requests an idle hour puts on the API server per 1,000 DynamoPoolRelays.
// Each function runs under the memory limit of its Knative Service (memory-cgroup.ts).
// SCALE_NODE_OPTIONS goes to the functions as NODE_OPTIONS (e.g. a heap limit).
import { spawn } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { startControlPlane } from "../dev/control-plane/index.ts";
import { freePort } from "../dev/control-plane/ports.ts";
import { fromHttp, toBinary, type CloudEvent } from "../shared/cloudevent.ts";
import type { DynamoPoolRelayStatus } from "../shared/api/dynamo-pool-relay.ts";
import { settleBounded } from "../shared/concurrency.ts";
import { parseConfig } from "../shared/config.ts";
import { decide } from "../shared/decide.ts";
import { EventType, productEvent, SourceEventType, STATUS_WRITTEN } from "../shared/events.ts";
import { TABLE, type KubeObject } from "../shared/kube/client.ts";
import { computeStatus } from "../shared/status.ts";
import { PAGE } from "../functions/eligibility/handler.ts";
import { resyncSettings } from "./knative-settings.ts";
import { commandIn, memoryCgroup } from "./memory-cgroup.ts";
import { serviceMemoryLimit } from "./memory-limit.ts";
import { procStatusMiB } from "./pipeline-support.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const DPRS = Number(process.env["SCALE_DPRS"] ?? 10_000);
const PER_NAMESPACE = 100;
// As knative/ installs the resync.
const { ticksPerHour: TICKS_PER_HOUR, periodSeconds: PERIOD_SECONDS, slots: SLOTS } = resyncSettings();
const MANAGER = "dynamo-pool-relay/bench";
const now = () => new Date().toISOString();
/** How each function process was limited, as its Knative Service limits its container. */
const limits = new Set<string>();
/** How to stop each function process still running. */
const running = new Set<() => Promise<void>>();
const DGD_SPEC = {
  backendFramework: "vllm",
  components: [
    { name: "Frontend", type: "frontend" },
    { name: "decode", type: "decode", replicas: 1 },
  ],
};

const cp = await startControlPlane({ profile: "api", ownerPid: process.pid, log: () => {} });
const admin = cp.client;
try {
  // 1. The objects, as fast as the API server takes them.
  const namespaces = Array.from({ length: Math.ceil(DPRS / PER_NAMESPACE) }, (_, i) => `scale-${i}`);
  for (const name of namespaces)
    await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name } }, MANAGER);
  const keys = Array.from({ length: DPRS }, (_, i) => ({
    namespace: namespaces[Math.floor(i / PER_NAMESPACE)]!,
    name: `g${i % PER_NAMESPACE}`,
  }));
  let t = performance.now();
  const dprs: KubeObject[] = [];
  const created = await settleBounded(keys, 32, async ({ namespace, name }) =>
    dprs.push(
      await admin.apply<KubeObject>(
        {
          apiVersion: "nvidia.com/v1alpha1",
          kind: "DynamoPoolRelay",
          metadata: { namespace, name },
          spec: { image: "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.2.0", clusterID: "bench" },
        },
        MANAGER,
      ),
    ),
  );
  let createMs = performance.now() - t;
  if (created.failures.length)
    throw new Error(`${created.failures.length} DynamoPoolRelays not created: ${String(created.failures[0]!.error)}`);

  // 2a. A tick before any is observed (a mass creation, or a new generation of every one): each is asked for.
  const sink = await replySink();
  const unobservedTick = await resyncTick("tick-unobserved");
  if (unobservedTick.emitted !== DPRS)
    throw new Error(`the tick over unobserved DynamoPoolRelays asked for ${unobservedTick.emitted}, not ${DPRS}`);

  // Converged and Ready, as a steady-state cluster's are: the next tick asks only for the periodic
  // slot, and lists objects of the size the product's status makes them.
  t = performance.now();
  const converged = await settleBounded(dprs, 32, (dpr) => admin.replaceStatus({ ...dpr, status: readyStatus(dpr) }));
  createMs += performance.now() - t;
  if (converged.failures.length)
    throw new Error(`${converged.failures.length} statuses not written: ${String(converged.failures[0]!.error)}`);

  // What one page of the tick's LIST weighs, as the objects and as the Table the resync asks for.
  const pageBytes = async (accept: string, query = "") =>
    JSON.stringify(
      await admin.request(
        "GET",
        `/apis/nvidia.com/v1alpha1/dynamopoolrelays?limit=${PAGE}${query}`,
        undefined,
        undefined,
        accept,
      ),
    ).length;
  const objectsPage = await pageBytes("application/json");
  const tablePage = await pageBytes(TABLE, "&includeObject=None");

  // 2b. A tick over converged DynamoPoolRelays: one periodic slot is asked for.
  const steadyTick = await resyncTick("tick-steady");
  sink.server.close();

  /** One tick through the bundled eligibility function, in a process of its own (its own peak RSS). */
  async function resyncTick(id: string) {
    const eligibility = await serve("eligibility", {
      K_SINK: sink.url,
      RESYNC_PERIOD_SECONDS: String(PERIOD_SECONDS),
      RESYNC_SLOTS: String(SLOTS),
    });
    const rssBefore = procStatusMiB(eligibility.child.pid!, "VmRSS")!;
    const received = sink.received;
    const start = performance.now();
    const answer = await eligibility.send({
      specversion: "1.0",
      id,
      source: "/bench/ping",
      type: SourceEventType.Ping,
      time: now(),
      datacontenttype: "application/json",
      data: { resync: true },
      extensions: {},
    });
    const ms = performance.now() - start;
    const log = await eligibility.logged(id);
    const peakMb = procStatusMiB(eligibility.child.pid!, "VmHWM")!;
    await eligibility.stop();
    return {
      ms,
      answer: answer === undefined ? 204 : 200,
      requests: log.reads + log.writes,
      // The eligibility function's resync line (functions/eligibility/handler.ts) carries these counts.
      pages: log["pages"] as number,
      emitted: log["emitted"] as number,
      listed: log["listed"] as number,
      received: sink.received - received,
      rssBefore,
      peakMb,
    };
  }

  // 3. A converged pair, reconciled again as a periodic resync does.
  await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: "pair" } }, MANAGER);
  await admin.apply(
    {
      apiVersion: "nvidia.com/v1beta1",
      kind: "DynamoGraphDeployment",
      metadata: { namespace: "pair", name: "g1" },
      spec: DGD_SPEC,
    },
    MANAGER,
  );
  await admin.apply(
    {
      apiVersion: "nvidia.com/v1alpha1",
      kind: "DynamoPoolRelay",
      metadata: { namespace: "pair", name: "g1" },
      spec: { image: "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.2.0", clusterID: "bench" },
    },
    MANAGER,
  );
  const apply = await serve("apply", {});
  const status = await serve("status", {});
  let round: { apply: Logged; status: Logged } | undefined;
  const notWoken: Logged = { reads: 0, writes: 0, status: 0 };
  for (let i = 0; i < 5; i++) {
    const reconcile = productEvent(
      EventType.Reconcile,
      { namespace: "pair", name: "g1", cause: "Resync" },
      { source: "/bench", cause: `resync-${i}`, time: now() },
    );
    const report = await apply.send(reconcile);
    const applied = await apply.logged(reconcile.id);
    // Converged: apply found the children and the status carrying the decision, and reported nothing.
    if (!report) {
      round = { apply: applied, status: notWoken };
      break;
    }
    // A report apply showed itself goes to no function (status's Trigger leaves it out).
    const shown = report.extensions[STATUS_WRITTEN] === "true";
    if (!shown) await status.send(report);
    round = { apply: applied, status: shown ? notWoken : await status.logged(report.id) };
  }
  for (const f of [apply, status]) await f.stop();

  // 4. An idle hour per 1,000 DynamoPoolRelays: every tick lists them and reconciles one slot.
  const perReconcile = round!.apply.reads + round!.apply.writes + round!.status.reads + round!.status.writes;
  const idlePerHour = TICKS_PER_HOUR * (Math.ceil(1000 / 500) + (1000 / SLOTS) * perReconcile);

  console.log(
    `\n${DPRS.toLocaleString("en")} DynamoPoolRelays in ${namespaces.length} namespaces (profile api, 32 requests at once); each function under its Service's memory limit (${serviceMemoryLimit("eligibility").text}): ${[...limits].join("; ")}\n`,
  );
  console.log("| | |\n|---|---|");
  console.log(
    `| server-side apply + status write of each (the API server's own rate) | ${(createMs / 1000).toFixed(1)} s, ${Math.round((DPRS * 2) / (createMs / 1000))} requests/s |`,
  );
  console.log(
    `| one LIST page of ${PAGE}, JSON: the objects / the Table the resync asks for | ${(objectsPage / 1024).toFixed(0)} KiB / ${(tablePage / 1024).toFixed(0)} KiB |`,
  );
  console.log(
    `| resync tick (fresh process), none observed yet / converged (one slot of ${SLOTS} due): API requests (LIST pages of ${PAGE}, as Tables) | ${unobservedTick.requests} (${unobservedTick.pages} pages) / ${steadyTick.requests} (${steadyTick.pages} pages) |`,
  );
  for (const [what, tick] of [
    ["none observed yet", unobservedTick],
    ["converged", steadyTick],
  ] as const) {
    console.log(
      `| resync tick, ${what}: reconcile requests emitted / received; wall time, answer | ${tick.emitted} of ${tick.listed} listed / ${tick.received}; ${(tick.ms / 1000).toFixed(2)} s, ${tick.answer} |`,
    );
    console.log(
      `| resync tick, ${what}: eligibility RSS before / peak | ${tick.rssBefore.toFixed(0)} MiB / ${tick.peakMb.toFixed(0)} MiB |`,
    );
  }
  console.log(
    `| periodic reconcile of a converged pair: apply / status requests (reads + writes) | ${round!.apply.reads} + ${round!.apply.writes} / ${round!.status.reads} + ${round!.status.writes} |`,
  );
  console.log(
    `| API requests per idle hour per 1,000 DynamoPoolRelays (${TICKS_PER_HOUR} ticks x (2 pages + ${(1000 / SLOTS).toFixed(0)} x ${perReconcile})) | ${Math.round(idlePerHour).toLocaleString("en")} (${(idlePerHour / 3600).toFixed(1)}/s); a cached controller: 0 |`,
  );
} finally {
  // A run that failed half-way leaves no function process, nor its cgroup.
  for (const stop of [...running]) await stop();
  await cp.stop();
}

interface Logged {
  reads: number;
  writes: number;
  status: number;
  [field: string]: unknown;
}

/**
 * The status the product writes for a converged pair whose two Relay pods are Ready, computed by
 * the core (shared/status.ts) from the decision for a DGD like the periodic pair's below.
 */
function readyStatus(dpr: KubeObject): DynamoPoolRelayStatus {
  const { namespace, name, uid } = dpr.metadata as { namespace: string; name: string; uid: string };
  const dgd = {
    apiVersion: "nvidia.com/v1beta1",
    kind: "DynamoGraphDeployment",
    metadata: { namespace, name },
    spec: DGD_SPEC,
  };
  const decision = decide(dpr, dgd, parseConfig({}).defaults);
  if (decision.action !== "apply") throw new Error(`the bench's DGD is not eligible: ${JSON.stringify(decision)}`);
  const pods = { replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 };
  return computeStatus({
    dpr: dpr,
    decision,
    observed: {
      deployment: { metadata: { generation: 1 }, spec: { replicas: 2 }, status: { observedGeneration: 1, ...pods } },
      service: { metadata: { ownerReferences: [{ uid, controller: true }] } },
      endpointSlices: [{ endpoints: [{ conditions: { ready: true } }, { conditions: { ready: true } }] }],
    },
    previous: undefined,
    observedGeneration: 1,
    now: now(),
    foreign: [],
    reflects: true,
    sourcesResourceVersion: "1234567",
  });
}

/** A bundled function as a process, its log lines by event id, and a way to send it an event. */
async function serve(target: string, env: Record<string, string>) {
  const port = await freePort();
  const limit = memoryCgroup(serviceMemoryLimit(target).bytes);
  limits.add("how" in limit ? limit.how : `none: ${limit.why}`);
  const argv = [
    process.execPath,
    `${root}dist/functions/main.mjs`,
    `--target=${target}`,
    `--source=${root}dist/functions/${target}/index.mjs`,
    `--port=${port}`,
  ];
  const { command, args } = commandIn(limit, argv);
  const child = spawn(command, args, {
    env: {
      ...process.env,
      KUBECONFIG: cp.kubeconfig,
      NODE_ENV: "production",
      K_SINK: "http://127.0.0.1:9/",
      NODE_OPTIONS: process.env["SCALE_NODE_OPTIONS"] ?? "",
      ...env,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise((r) => child.once("exit", r));
  const stop = async () => {
    running.delete(stop);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
    if ("remove" in limit) limit.remove();
  };
  running.add(stop);
  const lines = new Map<string, Logged>();
  const waiting = new Map<string, (l: Logged) => void>();
  createInterface({ input: child.stdout }).on("line", (line) => {
    const log = JSON.parse(line) as Logged & { event?: { id: string } };
    const id = log.event?.id;
    if (!id) return;
    lines.set(id, log);
    waiting.get(id)?.(log);
  });
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${target} exited before it listened (${child.exitCode ?? child.signalCode})`);
    try {
      await fetch(`http://127.0.0.1:${port}/`, { method: "GET" });
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  return {
    child,
    stop,
    /** The reply event, if any. */
    async send(event: CloudEvent): Promise<CloudEvent | undefined> {
      const { headers, body } = toBinary(event);
      const res = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", headers, body });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${target} answered ${res.status}: ${text}`);
      if (res.status === 204) return undefined;
      const reply = fromHttp(Object.fromEntries(res.headers), Buffer.from(text));
      if (!reply.ok) throw new Error(`${target}'s reply is not a CloudEvent: ${reply.error}`);
      return reply.value;
    },
    logged: (id: string) =>
      new Promise<Logged>((resolve) => (lines.has(id) ? resolve(lines.get(id)!) : waiting.set(id, resolve))),
  };
}

/** Where the resync's reconcile requests go: answers 202 as the Broker's ingress does, and counts. */
async function replySink(): Promise<{ url: string; server: http.Server; received: number }> {
  const sink = { received: 0 };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      sink.received++;
      res.writeHead(202).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return Object.assign(sink, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server });
}
