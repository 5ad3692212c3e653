// The fault suite: dozens of DGD/DynamoPoolRelay pairs mutated hundreds of times while the
// functions' API traffic passes a fault proxy (throttling, errors, resets, lost answers, hangs,
// latency, two outages), deliveries fail, lose their replies or come again late (the
// delivery-fault proxy), and the ApiServerSource adapter's container is killed once, with canaries
// the product must never touch. After the faults stop and the resync has run, every pair must have
// converged, and the run's numbers are printed.
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, inject, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { desiredChildren, planApply, type LiveObject } from "../../shared/apply-plan.ts";
import { decide } from "../../shared/decide.ts";
import { DEFAULT_OPERATOR_DEFAULTS } from "../../shared/eligibility.ts";
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import { ApiError } from "../../shared/kube/errors.ts";
import { knownResource, objectPath } from "../../shared/kube/resources.ts";
import { controlledBy } from "../../shared/ownership.ts";
import { planStatus } from "../../shared/status-plan.ts";
import type { ObservedEndpointSlice } from "../../shared/status.ts";
import { TEST_MANAGER, adminClient, dgdObject, dprObject, eventually, freshNamespace } from "../integration/helpers.ts";
import { invocations, send, sourcesSettled } from "../integration/knative-helpers.ts";
import { PRODUCT_NAMESPACE } from "../../dev/product.ts";
import { CHILD_REFS, condition, dgdRef, dprRef, pingEvent, type Dpr } from "../integration/pipeline-helpers.ts";
import { crash, runningContainer, type RunningContainer } from "../node-containers.ts";
import { resyncSettings } from "../../bench/knative-settings.ts";
import { seeded, type DeliveryFaultConfig } from "./delivery-faults.ts";
import type { Fault, FaultRates, ForwardedRequest, Outage } from "./fault-proxy.ts";

/** The resync as knative/ installs it: a tick at each of its slots reconciles every pair once. */
const RESYNC = resyncSettings();
const NAMESPACES = 3;
const PAIRS = 8;
const MUTATIONS = 240;
const RATES: FaultRates = {
  latency: 0.15,
  throttle: 0.03,
  error500: 0.02,
  error503: 0.02,
  resetBefore: 0.02,
  resetMidBody: 0.02,
  lostAnswer: 0.08,
  hang: 0.004,
};
const FAULTS: Fault[] = [
  "latency",
  "throttle",
  "error500",
  "error503",
  "resetBefore",
  "resetMidBody",
  "lostAnswer",
  "hang",
];

/** The functions (from the Broker's filter) and the Broker (from the sources and the resync's emits). */
const DELIVERIES: DeliveryFaultConfig = {
  seed: 7,
  targets: ["poolrelay-eligibility", "poolrelay-apply", "poolrelay-status", "dynamo-pool-relay"].map(
    (name) => `${PRODUCT_NAMESPACE}/${name}`,
  ),
  rates: { unavailable: 0.04, lostReply: 0.04, lateDuplicate: 0.08 },
};

const control = inject("faultControl");
async function setFaults(rates: FaultRates, outage?: Outage): Promise<void> {
  const res = await fetch(`${control}/faults`, { method: "POST", body: JSON.stringify({ rates, outage }) });
  expect(res.status).toBe(204);
}
async function setDeliveryFaults(on: boolean): Promise<void> {
  const res = await fetch(`${control}/delivery-faults`, { method: "POST", body: on ? JSON.stringify(DELIVERIES) : "" });
  expect(res.status).toBe(204);
}
async function proxyStats(): Promise<{
  seed: number;
  counts: Record<string, number>;
  forwarded: ForwardedRequest[];
  deliveryFaults: Record<string, number>;
}> {
  return (await fetch(`${control}/stats`)).json() as never;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ignoreMissing = (err: unknown) => {
  if (!(err instanceof ApiError && (err.status === 404 || err.status === 409))) throw err;
};

interface Pair {
  ns: string;
  name: string;
}

/** Children, as the status function and the divergence check read them. */
async function observe(admin: KubeClient, { ns, name }: Pair) {
  const kids: Record<string, LiveObject | undefined> = {};
  for (const [apiVersion, kind] of CHILD_REFS)
    kids[kind] = await admin.get<LiveObject>({ apiVersion, kind, namespace: ns, name: `${name}-pool-relay` });
  const endpointSlices = await admin.list<ObservedEndpointSlice>(
    "discovery.k8s.io/v1",
    "EndpointSlice",
    ns,
    `kubernetes.io/service-name=${name}-pool-relay`,
  );
  return { kids, endpointSlices };
}

/** Why this pair has not converged, or undefined: what a reconcile or a status run would still change. */
async function divergence(admin: KubeClient, pair: Pair): Promise<string | undefined> {
  const dpr = await admin.get<Dpr>(dprRef(pair.ns, pair.name));
  if (!dpr) return "the DynamoPoolRelay is missing";
  const dgd = await admin.get(dgdRef(pair.ns, pair.name));
  const { kids, endpointSlices } = await observe(admin, pair);
  const observedGeneration = dpr.status?.["observedGeneration"];
  if (observedGeneration !== dpr.metadata.generation)
    return `observedGeneration ${observedGeneration} is not generation ${dpr.metadata.generation}`;
  const decision = decide(dpr, dgd, DEFAULT_OPERATOR_DEFAULTS);
  if (decision.action === "apply") {
    const desired = desiredChildren(decision);
    const plan = planApply(
      desired,
      desired.map((d) => kids[d.kind]),
      dpr.metadata.uid,
    );
    if (plan.apply.length > 0)
      return `a reconcile would still apply ${plan.apply.map((a) => a.object.kind).join(", ")}`;
  }
  if (decision.action === "withdraw" && kids["Service"] && controlledBy(kids["Service"], dpr.metadata.uid))
    return "its Service is still published after a withdrawal";
  const status = planStatus({
    dpr: dpr,
    decision,
    observed: {
      serviceAccount: kids["ServiceAccount"],
      role: kids["Role"],
      roleBinding: kids["RoleBinding"],
      configMap: kids["ConfigMap"],
      deployment: kids["Deployment"],
      service: kids["Service"],
      endpointSlices,
    },
    changed: [],
    now: "1970-01-01T00:00:00Z",
  });
  if (status.write)
    return `a status run would still write: ${JSON.stringify(status.status.conditions?.find((c) => c.type === "Ready"))}`;
  return undefined;
}

/**
 * What a canary is made of that the product must never change: identity, owners, content, and no
 * field manager of the product's (the look-alike Deployment's status is the controller-manager's).
 */
const fingerprint = (o: (KubeObject & { spec?: unknown; data?: unknown }) | undefined) =>
  o && {
    uid: o.metadata.uid,
    ownerReferences: o.metadata["ownerReferences"],
    labels: o.metadata["labels"],
    spec: o.spec,
    data: o.data,
    productManagers: ((o.metadata["managedFields"] ?? []) as { manager: string }[]).filter((m) =>
      m.manager.startsWith("dynamo-pool-relay"),
    ).length,
  };

/** What deadlines() reads of a Knative Service in knative/services.yaml. */
interface KnativeServiceDoc {
  kind: string;
  spec: { template: { spec: { containers: { env: { name: string; value: string }[] }[] } } };
}

/** Each function's invocation deadline, as knative/services.yaml sets it. */
function deadlines(): Record<string, number> {
  const services = parseAllDocuments(readFileSync(new URL("../../knative/services.yaml", import.meta.url), "utf8"))
    .map((d) => d.toJS() as { kind?: unknown } | null)
    .filter((d): d is KnativeServiceDoc => d?.kind === "Service");
  return Object.fromEntries(
    services.map((s) => {
      const env = s.spec.template.spec.containers[0]!.env;
      return [
        env.find((e) => e.name === "FUNCTION_TARGET")!.value,
        Number(env.find((e) => e.name === "INVOCATION_DEADLINE_SECONDS")!.value),
      ];
    }),
  );
}

/** The running container of the ApiServerSource's receive adapter, while there is one adapter with one pod. */
async function adapterContainer(admin: KubeClient): Promise<RunningContainer | undefined> {
  const adapters = (
    await admin.list<{ metadata: { name: string }; spec: { selector: { matchLabels: Record<string, string> } } }>(
      "apps/v1",
      "Deployment",
      PRODUCT_NAMESPACE,
    )
  ).filter((d) => d.metadata.name.startsWith("apiserversource-"));
  if (adapters.length !== 1) return undefined;
  const selector = Object.entries(adapters[0]!.spec.selector.matchLabels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  return runningContainer(admin, PRODUCT_NAMESPACE, selector, "receive-adapter");
}

let stopSampler = () => {};
afterAll(async () => {
  stopSampler();
  await setDeliveryFaults(false);
  await setFaults({});
});

describe("under API faults, hostile timing and canaries", () => {
  it(
    "converges every pair, touches no foreign object, never claims Ready early and ends every invocation by its deadline",
    async () => {
      const admin = await adminClient();
      const random = seeded((await proxyStats()).seed ^ 0x5eed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

      // The namespaces first: each new one rolls the ApiServerSource adapter, and events in that gap are lost.
      const namespaces: string[] = [];
      for (let i = 0; i < NAMESPACES; i++) namespaces.push(await freshNamespace(`faults${i}`));
      for (const ns of namespaces) await sourcesSettled(ns);
      const pairs: Pair[] = namespaces.flatMap((ns) =>
        Array.from({ length: PAIRS }, (_, i) => ({ ns, name: `p${i}` })),
      );

      // Canaries: same-named objects of someone else, and a look-alike Deployment with the product's labels.
      const [a, b, c] = namespaces as [string, string, string];
      const labels = {
        "app.kubernetes.io/name": "dynamo-pool-relay",
        "app.kubernetes.io/instance": "p4",
        "app.kubernetes.io/managed-by": "dynamo-pool-relay",
      };
      const canaries: KubeObject[] = [
        {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "p1-pool-relay", namespace: a },
          spec: { selector: { app: "theirs" }, ports: [{ port: 80 }] },
        },
        {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "p2-pool-relay", namespace: b },
          data: { "sources.json": "theirs" },
        },
        { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "p3-pool-relay", namespace: c } },
        {
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: "p4-pool-relay-lookalike", namespace: a, labels },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: "lookalike" } },
            template: {
              metadata: { labels: { app: "lookalike" } },
              spec: { containers: [{ name: "c", image: "theirs:1" }] },
            },
          },
        },
      ];
      for (const o of canaries) await admin.apply(o, "someone-else");
      const canaryRef = (o: KubeObject) => ({
        apiVersion: o.apiVersion,
        kind: o.kind,
        namespace: o.metadata.namespace,
        name: o.metadata.name,
      });
      const canaryPaths = canaries.map((o) =>
        objectPath(knownResource(o.apiVersion, o.kind)!, o.metadata.namespace, o.metadata.name),
      );
      const before = await Promise.all(
        canaries.map(async (o) => fingerprint(await admin.get<KubeObject>(canaryRef(o)))),
      );

      // Ready=True claimed for a generation the children do not carry yet must never be seen: a Ready
      // condition that names the current generation while status.observedGeneration is older. (Right
      // after a spec edit the stored status is still the previous generation's, its conditions naming
      // that generation, until the product has run: kstatus reads that as stale, not as Ready; it is
      // counted, not failed.)
      const earlyReady: string[] = [];
      let staleReady = 0;
      let samples = 0;
      let sampling = true;
      stopSampler = () => void (sampling = false);
      const sampler = (async () => {
        while (sampling) {
          for (const ns of namespaces) {
            const r = await admin.list<Dpr>("nvidia.com/v1alpha1", "DynamoPoolRelay", ns).catch(() => []);
            for (const d of r) {
              samples++;
              const ready = condition(d, "Ready");
              if (ready?.status !== "True" || (d.status?.["observedGeneration"] ?? 0) >= d.metadata.generation)
                continue;
              if (ready.observedGeneration === d.metadata.generation) {
                earlyReady.push(
                  `${ns}/${d.metadata.name} generation ${d.metadata.generation} observed ${d.status?.["observedGeneration"]}`,
                );
              } else staleReady++;
            }
          }
          await sleep(300);
        }
      })();

      const rollout = async (p: Pair) => {
        const hashes = Array.from({ length: 1 + Math.floor(random() * 2) }, () =>
          Math.floor(random() * 0xffffff)
            .toString(16)
            .padStart(6, "0"),
        );
        for (let attempt = 0; attempt < 5; attempt++) {
          const dgd = await admin.get<KubeObject>(dgdRef(p.ns, p.name));
          if (!dgd) return;
          try {
            await admin.replaceStatus({
              ...dgd,
              status: {
                components: {
                  decode: { componentKind: "Deployment", componentNames: hashes.map((h) => `${p.name}-decode-${h}`) },
                },
              },
            });
            return;
          } catch (err) {
            ignoreMissing(err);
          }
        }
      };
      const createDgd = async (p: Pair, annotations: Record<string, string> = {}) => {
        await admin.apply(dgdObject(p.ns, p.name, annotations), TEST_MANAGER, { force: true });
        await rollout(p);
      };
      // Someone editing a field the product sets on its own child (never on a canary: that one is not the product's).
      const patchChild = async (p: Pair, kind: "ConfigMap" | "Deployment", body: unknown) => {
        const path = objectPath(
          knownResource(kind === "ConfigMap" ? "v1" : "apps/v1", kind)!,
          p.ns,
          `${p.name}-pool-relay`,
        );
        if (!canaryPaths.includes(path))
          await admin
            .request("PATCH", `${path}?fieldManager=someone-editing`, body, "application/merge-patch+json")
            .catch(ignoreMissing);
      };
      const del = (apiVersion: string, kind: string, p: Pair) =>
        admin.request("DELETE", objectPath(knownResource(apiVersion, kind)!, p.ns, p.name)).catch(ignoreMissing);

      const mutations: Record<string, number> = {};
      const mutate: Record<string, (p: Pair) => Promise<unknown>> = {
        rollout,
        specEdit: (p) =>
          admin.apply(dprObject(p.ns, p.name, { replicas: 1 + Math.floor(random() * 3) }), TEST_MANAGER, {
            force: true,
          }),
        eligibilityFlip: (p) => createDgd(p, random() < 0.5 ? { "nvidia.com/dynamo-discovery-backend": "etcd" } : {}),
        recreateDgd: async (p) => (
          await del("nvidia.com/v1beta1", "DynamoGraphDeployment", p),
          await sleep(200),
          await createDgd(p)
        ),
        recreateDpr: async (p) => (
          await del("nvidia.com/v1alpha1", "DynamoPoolRelay", p),
          await sleep(200),
          await admin.apply(dprObject(p.ns, p.name), TEST_MANAGER, { force: true })
        ),
        editConfigMap: (p) => patchChild(p, "ConfigMap", { data: { "sources.json": "{}" } }),
        editDeployment: (p) => patchChild(p, "Deployment", { spec: { replicas: 7 } }),
      };
      const weights: [string, number][] = [
        ["rollout", 30],
        ["specEdit", 20],
        ["eligibilityFlip", 10],
        ["recreateDgd", 8],
        ["recreateDpr", 6],
        ["editConfigMap", 13],
        ["editDeployment", 13],
      ];
      const total = weights.reduce((n, [, w]) => n + w, 0);
      const drawMutation = () => {
        let r = random() * total;
        for (const [name, w] of weights) if ((r -= w) < 0) return name;
        return weights[0]![0];
      };

      // Faults on from the first publish.
      await setFaults(RATES);
      await setDeliveryFaults(true);
      for (const p of pairs) {
        await createDgd(p);
        await admin.apply(dprObject(p.ns, p.name), TEST_MANAGER, { force: true });
      }
      const outages = (async () => {
        await sleep(8_000);
        // Source events dropped: the ApiServerSource adapter's container is killed and the kubelet
        // restarts it; what changed meanwhile is never sent.
        const adapter = await eventually("the ApiServerSource adapter runs", () => adapterContainer(admin));
        crash(adapter);
        await eventually(
          "the kubelet restarts the ApiServerSource adapter",
          async () => ((await adapterContainer(admin))?.restartCount ?? -1) > adapter.restartCount,
        );
        await sleep(2_000);
        await setFaults(RATES, "unavailable");
        await sleep(5_000);
        await setFaults(RATES);
        await sleep(15_000);
        // Longer than the status Trigger's retries (6, from 0.2 s doubling: about 13 s): some events are dead-lettered.
        await setFaults(RATES, "reset");
        await sleep(30_000);
        await setFaults(RATES);
      })();
      for (let i = 0; i < MUTATIONS; i++) {
        const kind = drawMutation();
        mutations[kind] = (mutations[kind] ?? 0) + 1;
        await mutate[kind]!(pick(pairs));
        await sleep(150);
      }
      await outages;
      await setFaults({});
      await setDeliveryFaults(false);
      const faultsOff = Date.now();

      // The resync: one tick for every slot, so every DynamoPoolRelay gets a full reconcile (the event
      // source's judgment asks for every pair off as well); again until all have converged.
      let rounds = 0;
      let divergent: string[] = [];
      for (; rounds < 4;) {
        rounds++;
        const now = Date.now();
        for (let slot = 0; slot < RESYNC.slots; slot++)
          await send(
            pingEvent(new Date(now + slot * RESYNC.periodSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z")),
          );
        try {
          await eventually(
            "every pair has converged",
            async () => {
              divergent = (
                await Promise.all(
                  pairs.map(async (p) =>
                    ((d) => (d ? `${p.ns}/${p.name}: ${d}` : undefined))(await divergence(admin, p)),
                  ),
                )
              ).filter((d): d is string => d !== undefined);
              return divergent.length === 0;
            },
            90_000,
          );
          break;
        } catch {
          // Another tick.
        }
      }
      const settleMs = Date.now() - faultsOff;
      sampling = false;
      await sampler;

      const stats = await proxyStats();
      const writes = stats.forwarded
        .filter((f) => f.method !== "GET")
        .map((f) => `${f.method} ${f.path.split("?")[0]}`);
      // A new pair's children are created unread, each only if absent (shared/apply-plan.ts,
      // planAbsent): a canary in the way refuses that creation with 409, and nothing else may reach it.
      const canaryAttempts = stats.forwarded.filter(
        (f) => f.method !== "GET" && canaryPaths.includes(f.path.split("?")[0]!),
      );
      const childPath =
        /^(PATCH|DELETE) \/(api\/v1|apis\/apps\/v1|apis\/rbac\.authorization\.k8s\.io\/v1)\/namespaces\/[a-z0-9-]+\/(serviceaccounts|roles|rolebindings|configmaps|deployments|services)\/p\d-pool-relay$/;
      const statusPath = /^PUT \/apis\/nvidia\.com\/v1alpha1\/namespaces\/[a-z0-9-]+\/dynamopoolrelays\/p\d\/status$/;
      // Kubernetes Events about the DynamoPoolRelays: new objects of the product's own, never an update.
      const eventsPath = /^POST \/api\/v1\/namespaces\/[a-z0-9-]+\/events$/;
      const allowed = (w: string) => childPath.test(w) || statusPath.test(w) || eventsPath.test(w);
      const limits = deadlines();
      const ours = (["eligibility", "apply", "status", "dead-letter"] as const).flatMap((fn) =>
        invocations(fn).map((i) => ({ fn, ...i })),
      );
      const late = ours.filter((i) => i.ms > (limits[i.fn]! + 1) * 1000);
      const after = await Promise.all(
        canaries.map(async (o) => fingerprint(await admin.get<KubeObject>(canaryRef(o)))),
      );
      const summary = {
        seed: stats.seed,
        pairs: pairs.length,
        mutations,
        apiRequests: stats.counts["requests"],
        faults: Object.fromEntries(FAULTS.map((f) => [f, stats.counts[f]])),
        outageRequests: stats.counts["outage"],
        deliveryFaults: stats.deliveryFaults,
        invocations: Object.fromEntries(
          ["eligibility", "apply", "status", "dead-letter"].map((fn) => [fn, ours.filter((i) => i.fn === fn).length]),
        ),
        answered5xx: ours.filter((i) => i.status >= 500).length,
        deadLettered: ours.filter((i) => i.fn === "dead-letter").length,
        deadlineExceeded: ours.filter((i) => i.deadlineExceeded === true).length,
        pastDeadline: late.length,
        maxMs: Object.fromEntries(
          ["eligibility", "apply", "status"].map((fn) => [
            fn,
            Math.max(0, ...ours.filter((i) => i.fn === fn).map((i) => i.ms)),
          ]),
        ),
        resyncRounds: rounds,
        settleSeconds: Math.round(settleMs / 1000),
        divergent: divergent.length,
        readySamples: samples,
        readyEarly: earlyReady.length,
        readyStale: staleReady,
        writes: writes.length,
        foreignWrites: writes.filter((w) => !allowed(w)).length,
        canaryWrites: canaryAttempts.filter((f) => f.status !== 409).length,
        canaryRefused: canaryAttempts.filter((f) => f.status === 409).length,
        canariesChanged: after.filter((f, i) => JSON.stringify(f) !== JSON.stringify(before[i])).length,
      };
      console.log(`[faults] ${JSON.stringify(summary)}`);

      // Presence first: every fault kind and both outages happened, the product wrote, the sampler saw objects.
      for (const f of FAULTS) expect(stats.counts[f], `injected ${f}`).toBeGreaterThan(0);
      for (const f of Object.keys(DELIVERIES.rates))
        expect(summary.deliveryFaults[f], `injected delivery fault ${f}`).toBeGreaterThan(0);
      expect(summary.outageRequests).toBeGreaterThan(0);
      expect(summary.writes).toBeGreaterThan(0);
      // The deadline check below reads the functions' logs: they must be there.
      for (const fn of ["eligibility", "apply", "status"])
        expect(summary.invocations[fn], `invocations of ${fn} logged`).toBeGreaterThan(0);
      expect(samples).toBeGreaterThan(pairs.length);
      expect(after.every((f) => f !== undefined)).toBe(true);
      // Then the outcome.
      expect(divergent).toEqual([]);
      expect(earlyReady).toEqual([]);
      expect(late.map((i) => `${i.fn} ${i.event.id} ${i.ms} ms`)).toEqual([]);
      expect(writes.filter((w) => !allowed(w))).toEqual([]);
      expect(summary.canaryWrites).toBe(0);
      expect(after).toEqual(before);
      // The canaries' pairs say whose objects are in the way.
      const reasons = await Promise.all(
        [
          [a, "p1"],
          [b, "p2"],
          [c, "p3"],
        ].map(async ([ns, name]) => (await admin.get<Dpr>(dprRef(ns!, name!)))!),
      );
      expect(condition(reasons[0]!, "ServicePublished")?.reason).toBe("ServiceNotOwned");
      for (const [d, kind] of [
        [reasons[1]!, "ConfigMap"],
        [reasons[2]!, "ServiceAccount"],
      ] as const) {
        const ready = condition(d, "Ready")!;
        if (ready.reason !== "NotEligible")
          expect(ready).toMatchObject({
            status: "False",
            reason: "ForeignChild",
            message: expect.stringContaining(`${kind} ${d.metadata.name}-pool-relay`) as unknown,
          });
      }
    },
    20 * 60_000,
  );
});
