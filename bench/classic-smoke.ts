// A smoke run of the classic controller-runtime operator (bench/classic/) on the local control
// plane, profile full (etcd, kube-apiserver, controller manager, scheduler, kwok; no Knative):
// CLASSIC_PAIRS (default 20) DGD/DynamoPoolRelay pairs created at once, the operator started
// before them in their namespace, timed until every DynamoPoolRelay is Ready. Then it checks the
// operator against the product's own code: every child carries the applied hash that shared/
// renders for the pair, and the status it wrote is the one shared/status-plan.ts computes from the
// same children (nothing to write). Prints the time to all Ready, the operator's API requests per
// pair and its CPU seconds; then, with a second run of the operator, a DGD rollout (new worker
// hash) and a DGD deletion (the Service withdrawn), each checked the same way.
//
//   bash scripts/with-node.sh node bench/classic-smoke.ts
//
// Extra operator flags: CLASSIC_ARGS="--max-concurrent-reconciles=8 --kube-api-qps=20 --kube-api-burst=30".
// The operator's log of the burst, every line: CLASSIC_LOG=FILE (with CLASSIC_ARGS=--zap-log-level=debug,
// one line a reconcile: what it applied, each apply's milliseconds, the Ready it computed, the status
// write). With it, FILE.cluster.json holds each pair's own times from the cluster (creations, pod
// Ready, Deployment Available, DynamoPoolRelay Ready), and FILE.stuck.json, when the wait times
// out, what the cluster holds for the pairs not Ready.
import { appendFileSync, writeFileSync } from "node:fs";
import { fakeNode, startControlPlane } from "../dev/control-plane/index.ts";
import { APPLIED_HASH, desiredChildren, type LiveObject } from "../shared/apply-plan.ts";
import { settleBounded } from "../shared/concurrency.ts";
import { parseConfig } from "../shared/config.ts";
import { decide } from "../shared/decide.ts";
import type { KubeClient, KubeObject } from "../shared/kube/client.ts";
import { childName } from "../shared/names.ts";
import { CHILD_KINDS } from "../shared/render/index.ts";
import { planStatus } from "../shared/status-plan.ts";
import { buildClassic, startClassic, type Classic } from "./classic.ts";
import { dgd, dpr, sleep, until } from "./pipeline-support.ts";

const PAIRS = Number(process.env["CLASSIC_PAIRS"] ?? 20);
const ARGS = (process.env["CLASSIC_ARGS"] ?? "").split(/\s+/).filter(Boolean);
const LOG = process.env["CLASSIC_LOG"];
const AT_ONCE = 32;
const MANAGER = "dynamo-pool-relay/bench";
const NS = "classic";
const DEFAULTS = parseConfig({}).defaults;
const names = Array.from({ length: PAIRS }, (_, i) => `g${i}`);

const API_VERSIONS: Record<string, string> = {
  ServiceAccount: "v1",
  Role: "rbac.authorization.k8s.io/v1",
  RoleBinding: "rbac.authorization.k8s.io/v1",
  ConfigMap: "v1",
  Deployment: "apps/v1",
  Service: "v1",
};
const FIELDS: Record<string, string> = {
  ServiceAccount: "serviceAccount",
  Role: "role",
  RoleBinding: "roleBinding",
  ConfigMap: "configMap",
  Deployment: "deployment",
  Service: "service",
};

type Condition = { type: string; status: string; reason?: string; lastTransitionTime?: string };
type Dpr = KubeObject & {
  metadata: { uid: string; generation?: number; creationTimestamp?: string };
  status?: { conditions?: Condition[] };
};
const ready = (d: Dpr) => d.status?.conditions?.find((c) => c.type === "Ready");

/**
 * What the product makes of one pair as it is now: the problems found, none when the operator's
 * children carry the product's applied hashes and its status is the one the product computes.
 */
async function parity(admin: KubeClient, name: string): Promise<string[]> {
  const current = await admin.get<Dpr>({
    apiVersion: "nvidia.com/v1alpha1",
    kind: "DynamoPoolRelay",
    namespace: NS,
    name,
  });
  if (!current) return [`${name}: no DynamoPoolRelay`];
  const graph = await admin.get({
    apiVersion: "nvidia.com/v1beta1",
    kind: "DynamoGraphDeployment",
    namespace: NS,
    name,
  });
  const decision = decide(current, graph, DEFAULTS);
  if (decision.action === "reject") return [`${name}: the product rejects it: ${decision.message}`];
  const live = new Map<string, LiveObject | undefined>();
  for (const kind of CHILD_KINDS)
    live.set(
      kind,
      await admin.get<LiveObject>({ apiVersion: API_VERSIONS[kind]!, kind, namespace: NS, name: childName(name) }),
    );
  const problems: string[] = [];
  if (decision.action === "apply") {
    for (const child of desiredChildren(decision)) {
      const want = (child.metadata as unknown as { annotations: Record<string, string> }).annotations[APPLIED_HASH];
      const got = live.get(child.kind)?.metadata.annotations?.[APPLIED_HASH];
      if (got !== want) problems.push(`${name}: ${child.kind} has applied hash ${got}, the product renders ${want}`);
    }
  }
  const slices = live.get("Service")
    ? await admin.list<KubeObject>(
        "discovery.k8s.io/v1",
        "EndpointSlice",
        NS,
        `kubernetes.io/service-name=${childName(name)}`,
      )
    : [];
  // A withdrawal reads only the Deployment and the Service, as the product's apply does.
  const kinds = decision.action === "apply" ? CHILD_KINDS : (["Deployment", "Service"] as const);
  const observed = Object.fromEntries(kinds.map((k) => [FIELDS[k]!, live.get(k)]));
  const plan = planStatus({
    dpr: current as never,
    decision,
    observed: { deployment: undefined, ...observed, endpointSlices: slices } as never,
    changed: [],
    now: new Date().toISOString(),
  });
  if (plan.write)
    problems.push(
      `${name}: the product would write another status:\n  stored  ${JSON.stringify(current.status)}\n  product ${JSON.stringify(plan.status)}`,
    );
  return problems;
}

/** Waits until the product finds nothing to change on any of `pairs`; returns the problems left at the timeout. */
async function converged(admin: KubeClient, pairs: readonly string[], timeoutMs = 60_000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const problems = (await Promise.all(pairs.map((n) => parity(admin, n)))).flat();
    if (problems.length === 0 || Date.now() > deadline) return problems;
    await sleep(500);
  }
}

/** The pairs not Ready yet and what the cluster holds for them: their Deployment's status, pods and EndpointSlices. */
async function dumpCluster(admin: KubeClient, listed: Dpr[], file: string): Promise<void> {
  const [deps, pods, slices] = await Promise.all([
    admin.list<KubeObject>("apps/v1", "Deployment", NS),
    admin.list<KubeObject>("v1", "Pod", NS),
    admin.list<KubeObject>("discovery.k8s.io/v1", "EndpointSlice", NS),
  ]);
  const stuck = listed
    .filter((d) => ready(d)?.status !== "True")
    .map((d) => {
      const c = childName(d.metadata.name);
      const dep: (KubeObject & { status?: unknown }) | undefined = deps.find((x) => x.metadata.name === c);
      return {
        name: d.metadata.name,
        status: d.status,
        deployment: dep && { metadata: dep.metadata, status: dep.status },
        pods: pods
          .filter((p) => p.metadata.name.startsWith(`${c}-`))
          .map((p) => ({
            name: p.metadata.name,
            status: (p as { status?: unknown }).status,
            node: (p as { spec?: { nodeName?: string } }).spec?.nodeName,
          })),
        slices: slices.filter(
          (x) => (x.metadata.labels as Record<string, string> | undefined)?.["kubernetes.io/service-name"] === c,
        ),
      };
    });
  writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), stuck }, null, 1));
}

function started(classic: Classic | undefined, lines: string[]): Promise<void> {
  return until(
    "the classic operator's workers",
    () => classic !== undefined && lines.some((l) => l.includes("Starting workers")),
    120_000,
    100,
  ).then(() => {});
}

const binary = await buildClassic();
console.log(`classic operator: ${binary}`);
const cp = await startControlPlane({
  profile: "full",
  ownerPid: process.pid,
  log: (l) => console.log(`[control-plane] ${l}`),
});
let failed = false;
let classic: Classic | undefined;
try {
  const admin = cp.client;
  await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } }, MANAGER);
  // Room for 2 Relay pods a pair: the control plane's one kwok node holds 220 pods, as bench/pipeline.ts counts 200 a node.
  for (let i = 1; i < Math.ceil((2 * PAIRS) / 200); i++)
    await admin.apply(fakeNode(`kwok-node-${i}`), MANAGER, { force: true });

  // 1. The burst.
  const logs: string[] = [];
  if (LOG) writeFileSync(LOG, "");
  classic = startClassic(binary, cp.kubeconfig, NS, {
    args: ARGS,
    log: (l) => {
      logs.push(l);
      if (LOG) appendFileSync(LOG, `${l}\n`);
    },
  });
  await started(classic, logs);
  const t0 = performance.now();
  const all = async (what: string, write: (name: string) => Promise<unknown>) => {
    const { failures } = await settleBounded(names, AT_ONCE, write);
    if (failures.length) throw new Error(`${failures.length} ${what} failed; the first: ${String(failures[0]!.error)}`);
  };
  await all("DynamoPoolRelays", (name) => admin.apply(dpr(NS, name), MANAGER));
  await all("DGDs", (name) => admin.apply(dgd(NS, name), MANAGER));
  const createdS = (performance.now() - t0) / 1000;
  let listed: Dpr[] = [];
  await until(
    `all ${PAIRS} DynamoPoolRelays Ready`,
    async () => {
      listed = await admin.list<Dpr>("nvidia.com/v1alpha1", "DynamoPoolRelay", NS);
      return listed.length === PAIRS && listed.every((d) => ready(d)?.status === "True");
    },
    300_000,
    100,
  ).catch(async (err: unknown) => {
    if (LOG) await dumpCluster(admin, listed, `${LOG}.stuck.json`);
    throw err;
  });
  const readyS = (performance.now() - t0) / 1000;
  // Each pair's Ready, from its condition's lastTransitionTime (whole seconds), from the first create, as bench/pipeline.ts counts it.
  const firstCreated = Math.min(...listed.map((d) => Date.parse(d.metadata.creationTimestamp!)));
  const readyAt = listed
    .map((d) => (Date.parse(ready(d)!.lastTransitionTime!) - firstCreated) / 1000)
    .sort((a, b) => a - b);
  const at = (xs: number[], q: number) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))]!.toFixed(0);
  // The cluster's side: when each Relay Deployment became Available (whole seconds), what the Ready waits for.
  type Obj = KubeObject & {
    metadata: { name: string; creationTimestamp?: string; labels?: Record<string, string> };
    status?: { conditions?: Condition[] };
  };
  const deps = await admin.list<Obj>("apps/v1", "Deployment", NS);
  const t = (s?: string) => (s ? (Date.parse(s) - firstCreated) / 1000 : undefined);
  const cond = (o: Obj | undefined, type: string) =>
    t(o?.status?.conditions?.find((c) => c.type === type && c.status === "True")?.lastTransitionTime);
  const availableAt = deps.flatMap((d) => cond(d, "Available") ?? []).sort((a, b) => a - b);
  if (LOG) {
    // The cluster's own times for each pair (whole seconds), beside the operator's log.
    const [dgds, svcs, pods] = await Promise.all([
      admin.list<Obj>("nvidia.com/v1beta1", "DynamoGraphDeployment", NS),
      admin.list<Obj>("v1", "Service", NS),
      admin.list<Obj>("v1", "Pod", NS),
    ]);
    const byName = (xs: Obj[]) => new Map(xs.map((x) => [x.metadata.name, x]));
    const [g, d, s] = [byName(dgds), byName(deps), byName(svcs)];
    const rows = listed.map((x) => {
      const n = x.metadata.name,
        c = childName(n);
      const pod = pods.find((p) => p.metadata.name.startsWith(`${c}-`));
      return {
        name: n,
        dpr: t(x.metadata.creationTimestamp),
        dgd: t(g.get(n)?.metadata.creationTimestamp),
        service: t(s.get(c)?.metadata.creationTimestamp),
        deployment: t(d.get(c)?.metadata.creationTimestamp),
        available: cond(d.get(c), "Available"),
        pod: t(pod?.metadata.creationTimestamp),
        podReady: cond(pod, "Ready"),
        ready: t(ready(x)?.lastTransitionTime),
      };
    });
    writeFileSync(
      `${LOG}.cluster.json`,
      JSON.stringify({ firstCreated: new Date(firstCreated).toISOString(), rows }, null, 1),
    );
  }
  const problems = await converged(admin, names);
  const settledS = (performance.now() - t0) / 1000;
  const report = await classic.stop();
  classic = undefined;
  console.log(
    `\n${PAIRS} DGD/DynamoPoolRelay pairs at once, the classic operator (${ARGS.join(" ") || "default flags"}), profile full\n`,
  );
  console.log("| | |\n|---|---|");
  console.log(`| the pairs created (DynamoPoolRelays, then DGDs, ${AT_ONCE} at once) | ${createdS.toFixed(1)} s |`);
  console.log(`| every DynamoPoolRelay Ready, from the first create (polled every 100 ms) | ${readyS.toFixed(1)} s |`);
  const spread = (xs: number[]) => `${at(xs, 0)} s, ${at(xs, 0.5)} s, ${at(xs, 0.9)} s, ${at(xs, 1)} s`;
  console.log(
    `| each Relay Deployment Available (its condition's lastTransitionTime), from the first create: first, median, 90th, last | ${availableAt.length ? spread(availableAt) : "-"} |`,
  );
  console.log(
    `| each DynamoPoolRelay Ready (its condition's lastTransitionTime), from the first create: first, median, 90th, last | ${spread(readyAt)} |`,
  );
  console.log(
    `| every status and child as the product computes them (polled every 500 ms) | ${problems.length ? "NOT REACHED" : `${settledS.toFixed(1)} s`} |`,
  );
  console.log(
    `| API requests of the operator, start to stop (informers' lists and watches and discovery included) | ${report.requests} (${(report.requests / PAIRS).toFixed(1)} per pair) |`,
  );
  console.log(
    `| by verb | ${Object.entries(report.byVerb)
      .sort()
      .map(([v, n]) => `${v} ${n}`)
      .join(", ")} |`,
  );
  console.log(
    `| reconciles, child applies, status writes, conflicts | ${String(report.line["reconciles"])}, ${String(report.line["childApplies"])}, ${String(report.line["statusWrites"])}, ${String(report.line["conflicts"])} |`,
  );
  console.log(
    `| CPU seconds of the operator (/proc utime+stime before SIGTERM; getrusage at exit) | ${report.cpuSeconds.toFixed(2)} s; ${Number(report.line["cpuSeconds"]).toFixed(2)} s |`,
  );
  console.log(`| its report line | \`${JSON.stringify(report.line)}\` |`);
  if (problems.length) {
    failed = true;
    console.log(`\nparity problems:\n${problems.join("\n")}`);
  }

  // 2. Behaviour: a second run of the operator, a rollout and a withdrawal.
  const logs2: string[] = [];
  classic = startClassic(binary, cp.kubeconfig, NS, { args: ARGS, log: (l) => logs2.push(l) });
  await started(classic, logs2);
  const rolled = "g0";
  await admin.apply(
    {
      ...dgd(NS, rolled),
      metadata: { name: rolled, namespace: NS, annotations: { "nvidia.com/current-worker-hash": "abc123" } },
    },
    MANAGER,
  );
  const gone = names[1]!;
  const doomed = await admin.get({
    apiVersion: "nvidia.com/v1beta1",
    kind: "DynamoGraphDeployment",
    namespace: NS,
    name: gone,
  });
  await admin.deleteExact(
    { apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment", namespace: NS, name: gone },
    (doomed!.metadata as { uid: string }).uid,
  );
  await until(
    "the rollout's worker namespace in the status",
    async () => {
      const d = await admin.get<Dpr & { status?: { workerNamespaces?: string[] } }>({
        apiVersion: "nvidia.com/v1alpha1",
        kind: "DynamoPoolRelay",
        namespace: NS,
        name: rolled,
      });
      return d?.status?.workerNamespaces?.includes(`${NS}-${rolled}-abc123`) === true;
    },
    60_000,
    100,
  );
  await until(
    "the withdrawal",
    async () => {
      const d = await admin.get<Dpr>({
        apiVersion: "nvidia.com/v1alpha1",
        kind: "DynamoPoolRelay",
        namespace: NS,
        name: gone,
      });
      const svc = await admin.get({ apiVersion: "v1", kind: "Service", namespace: NS, name: childName(gone) });
      return ready(d!)?.reason === "NotEligible" && svc === undefined;
    },
    60_000,
    100,
  );
  const after = await converged(admin, names);
  const cm = await admin.get<{ data: Record<string, string> }>({
    apiVersion: "v1",
    kind: "ConfigMap",
    namespace: NS,
    name: childName(rolled),
  });
  const report2 = await classic.stop();
  classic = undefined;
  console.log(
    `\nsecond run: ${rolled}'s DGD rolled to worker hash abc123 (sources now ${cm?.data["sources.json"]}), ${gone}'s DGD deleted (Service withdrawn)`,
  );
  console.log(
    `second run's requests: ${report2.requests} (${Object.entries(report2.byVerb)
      .sort()
      .map(([v, n]) => `${v} ${n}`)
      .join(
        ", ",
      )}); reconciles ${String(report2.line["reconciles"])}, status writes ${String(report2.line["statusWrites"])}`,
  );
  if (after.length) {
    failed = true;
    console.log(`\nparity problems after the rollout and the withdrawal:\n${after.join("\n")}`);
  }
  console.log(failed ? "\nclassic smoke: FAILED" : "\nclassic smoke: passed");
} finally {
  if (classic) await classic.stop().catch((err: unknown) => console.error(String(err)));
  await cp.stop();
}
process.exitCode = failed ? 1 : 0;
