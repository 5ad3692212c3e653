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
import { startControlPlane } from "../dev/control-plane/index.ts";
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
const AT_ONCE = 32;
const MANAGER = "dynamo-pool-relay/bench";
const NS = "classic";
const DEFAULTS = parseConfig({}).defaults;
const names = Array.from({ length: PAIRS }, (_, i) => `g${i}`);

const API_VERSIONS: Record<string, string> = {
  ServiceAccount: "v1", Role: "rbac.authorization.k8s.io/v1", RoleBinding: "rbac.authorization.k8s.io/v1",
  ConfigMap: "v1", Deployment: "apps/v1", Service: "v1",
};
const FIELDS: Record<string, string> = {
  ServiceAccount: "serviceAccount", Role: "role", RoleBinding: "roleBinding", ConfigMap: "configMap", Deployment: "deployment", Service: "service",
};

type Condition = { type: string; status: string; reason?: string };
type Dpr = KubeObject & { metadata: { uid: string; generation?: number }; status?: { conditions?: Condition[] } };
const ready = (d: Dpr) => d.status?.conditions?.find((c) => c.type === "Ready");

/**
 * What the product makes of one pair as it is now: the problems found, none when the operator's
 * children carry the product's applied hashes and its status is the one the product computes.
 */
async function parity(admin: KubeClient, name: string): Promise<string[]> {
  const current = await admin.get<Dpr>({ apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", namespace: NS, name });
  if (!current) return [`${name}: no DynamoPoolRelay`];
  const graph = await admin.get({ apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment", namespace: NS, name });
  const decision = decide(current, graph, DEFAULTS);
  if (decision.action === "reject") return [`${name}: the product rejects it: ${decision.message}`];
  const live = new Map<string, LiveObject | undefined>();
  for (const kind of CHILD_KINDS) live.set(kind, await admin.get<LiveObject>({ apiVersion: API_VERSIONS[kind]!, kind, namespace: NS, name: childName(name) }));
  const problems: string[] = [];
  if (decision.action === "apply") {
    for (const child of desiredChildren(decision)) {
      const want = (child.metadata as unknown as { annotations: Record<string, string> }).annotations[APPLIED_HASH];
      const got = live.get(child.kind)?.metadata.annotations?.[APPLIED_HASH];
      if (got !== want) problems.push(`${name}: ${child.kind} has applied hash ${got}, the product renders ${want}`);
    }
  }
  const slices = live.get("Service") ? await admin.list<KubeObject>("discovery.k8s.io/v1", "EndpointSlice", NS, `kubernetes.io/service-name=${childName(name)}`) : [];
  // A withdrawal reads only the Deployment and the Service, as the product's apply does.
  const kinds = decision.action === "apply" ? CHILD_KINDS : (["Deployment", "Service"] as const);
  const observed = Object.fromEntries(kinds.map((k) => [FIELDS[k]!, live.get(k)]));
  const plan = planStatus({ dpr: current as never, decision, observed: { deployment: undefined, ...observed, endpointSlices: slices } as never, changed: [], now: new Date().toISOString() });
  if (plan.write) problems.push(`${name}: the product would write another status:\n  stored  ${JSON.stringify(current.status)}\n  product ${JSON.stringify(plan.status)}`);
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

function started(classic: Classic | undefined, lines: string[]): Promise<void> {
  return until("the classic operator's workers", async () => classic !== undefined && lines.some((l) => l.includes("Starting workers")), 120_000, 100).then(() => {});
}

const binary = await buildClassic();
console.log(`classic operator: ${binary}`);
const cp = await startControlPlane({ profile: "full", ownerPid: process.pid, log: (l) => console.log(`[control-plane] ${l}`) });
let failed = false;
let classic: Classic | undefined;
try {
  const admin = cp.client;
  await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } }, MANAGER);

  // 1. The burst.
  const logs: string[] = [];
  classic = startClassic(binary, cp.kubeconfig, NS, { args: ARGS, log: (l) => logs.push(l) });
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
  await until(`all ${PAIRS} DynamoPoolRelays Ready`, async () => {
    listed = await admin.list<Dpr>("nvidia.com/v1alpha1", "DynamoPoolRelay", NS);
    return listed.length === PAIRS && listed.every((d) => ready(d)?.status === "True");
  }, 300_000, 100);
  const readyS = (performance.now() - t0) / 1000;
  const problems = await converged(admin, names);
  const settledS = (performance.now() - t0) / 1000;
  const report = await classic.stop();
  classic = undefined;
  console.log(`\n${PAIRS} DGD/DynamoPoolRelay pairs at once, the classic operator (${ARGS.join(" ") || "default flags"}), profile full\n`);
  console.log("| | |\n|---|---|");
  console.log(`| the pairs created (DynamoPoolRelays, then DGDs, ${AT_ONCE} at once) | ${createdS.toFixed(1)} s |`);
  console.log(`| every DynamoPoolRelay Ready, from the first create (polled every 100 ms) | ${readyS.toFixed(1)} s |`);
  console.log(`| every status and child as the product computes them (polled every 500 ms) | ${problems.length ? "NOT REACHED" : `${settledS.toFixed(1)} s`} |`);
  console.log(`| API requests of the operator, start to stop (informers' lists and watches and discovery included) | ${report.requests} (${(report.requests / PAIRS).toFixed(1)} per pair) |`);
  console.log(`| by verb | ${Object.entries(report.byVerb).sort().map(([v, n]) => `${v} ${n}`).join(", ")} |`);
  console.log(`| reconciles, child applies, status writes, conflicts | ${report.line["reconciles"]}, ${report.line["childApplies"]}, ${report.line["statusWrites"]}, ${report.line["conflicts"]} |`);
  console.log(`| CPU seconds of the operator (/proc utime+stime before SIGTERM; getrusage at exit) | ${report.cpuSeconds.toFixed(2)} s; ${Number(report.line["cpuSeconds"]).toFixed(2)} s |`);
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
  await admin.apply({ ...dgd(NS, rolled), metadata: { name: rolled, namespace: NS, annotations: { "nvidia.com/current-worker-hash": "abc123" } } }, MANAGER);
  const gone = names[1]!;
  const doomed = await admin.get({ apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment", namespace: NS, name: gone });
  await admin.deleteExact({ apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment", namespace: NS, name: gone }, (doomed!.metadata as { uid: string }).uid);
  await until("the rollout's worker namespace in the status", async () => {
    const d = await admin.get<Dpr & { status?: { workerNamespaces?: string[] } }>({ apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", namespace: NS, name: rolled });
    return d?.status?.workerNamespaces?.includes(`${NS}-${rolled}-abc123`) === true;
  }, 60_000, 100);
  await until("the withdrawal", async () => {
    const d = await admin.get<Dpr>({ apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", namespace: NS, name: gone });
    const svc = await admin.get({ apiVersion: "v1", kind: "Service", namespace: NS, name: childName(gone) });
    return ready(d!)?.reason === "NotEligible" && svc === undefined;
  }, 60_000, 100);
  const after = await converged(admin, names);
  const cm = await admin.get<{ data: Record<string, string> }>({ apiVersion: "v1", kind: "ConfigMap", namespace: NS, name: childName(rolled) });
  const report2 = await classic.stop();
  classic = undefined;
  console.log(`\nsecond run: ${rolled}'s DGD rolled to worker hash abc123 (sources now ${cm?.data["sources.json"]}), ${gone}'s DGD deleted (Service withdrawn)`);
  console.log(`second run's requests: ${report2.requests} (${Object.entries(report2.byVerb).sort().map(([v, n]) => `${v} ${n}`).join(", ")}); reconciles ${report2.line["reconciles"]}, status writes ${report2.line["statusWrites"]}`);
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
