// Record and replay through the real Broker: a publish-then-rollout session recorded from a tap on
// the Broker (`poolrelay record`), replayed (`poolrelay replay --to` the Broker ingress), in order
// and shuffled, into a cluster holding the same objects that never routed their events (the
// product's Triggers matched nothing while they were created), ends in the state of the original.
// Events are hints; every function re-reads the truth.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEvents, record, replay } from "../../cli/replay.ts";
import { ensureBinaries } from "../../dev/control-plane/binaries.ts";
import { productManifests } from "../../dev/product.ts";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import { TEST_MANAGER, adminClient, dgdObject, dprObject, eventually, freshNamespace } from "./helpers.ts";
import { allInvocations, brokerIngress, invocations, tapBroker, type TestTap } from "./knative-helpers.ts";
import type { DynamoPoolRelayStatus } from "../../shared/api/dynamo-pool-relay.ts";
import {
  children,
  condition,
  dgdRef,
  dprRef,
  rollout,
  settledDpr,
  type ChildConfigMap,
  type ChildDeployment,
  type ChildRole,
  type ChildService,
  type Dpr,
} from "./pipeline-helpers.ts";

const HASHES = ["aaaa1111", "bbbb2222"];
let admin: KubeClient;
let tap: TestTap;
beforeAll(async () => {
  admin = await adminClient();
  tap = await tapBroker("test-replay-tap");
});
afterAll(async () => {
  await tap?.stop();
});

/**
 * What the session produced, without what differs between runs (UIDs, versions, times, cluster
 * IPs): of the ConfigMap's version the status names, only that it is the live one.
 */
async function state(ns: string) {
  const get = <T>(apiVersion: string, kind: string, name = "g1-pool-relay") =>
    admin.get<T>({ apiVersion, kind, namespace: ns, name });
  const dpr = (await get<Dpr>("nvidia.com/v1alpha1", "DynamoPoolRelay", "g1"))!;
  const configMap = await get<ChildConfigMap>("v1", "ConfigMap");
  const { conditions, sourcesResourceVersion, ...status }: DynamoPoolRelayStatus = dpr["status"] ?? {};
  return {
    status: {
      ...status,
      conditions: (conditions ?? []).map(({ lastTransitionTime: _t, ...c }: Record<string, unknown>) => c),
    },
    sourcesAtLiveVersion:
      sourcesResourceVersion !== undefined && sourcesResourceVersion === configMap?.["metadata"].resourceVersion,
    sources: configMap?.["data"],
    template: (await get<ChildDeployment>("apps/v1", "Deployment"))?.["spec"].template,
    service: (await get<ChildService>("v1", "Service"))?.["spec"].ports,
    role: (await get<ChildRole>("rbac.authorization.k8s.io/v1", "Role"))?.["rules"],
  };
}

function shuffled<T>(items: readonly T[], seed = 7): T[] {
  const out = [...items];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const productTriggers = () => productManifests(ensureBinaries().kubectl).filter((o) => o.kind === "Trigger");
const NEVER = { exact: { type: "test.poolrelay.paused" } };

/**
 * The product's Triggers match nothing while `fn` runs (one more filter that no event passes), so
 * the objects it creates are never routed to the functions. (Deleting and re-creating the Triggers
 * instead can leave the old Subscription's entry in the Broker's channel: an event then also goes
 * to the refusing filter and on to the dead-letter sink.)
 */
async function unrouted(ns: string, fn: () => Promise<void>): Promise<void> {
  const triggers = productTriggers();
  for (const t of triggers) {
    const spec = t["spec"] as { filters: unknown[] };
    await admin.apply(
      { ...t, spec: { ...spec, filters: [...spec.filters, NEVER] } },
      "dynamo-pool-relay/test-install",
      { force: true },
    );
  }
  // Deliveries already under way (retries included) finish: then nothing reaches the functions.
  await eventually("no function works on this namespace any more", async () => {
    const before = allInvocations().filter((i) => JSON.stringify(i).includes(ns)).length;
    await new Promise((r) => setTimeout(r, 2000));
    return allInvocations().filter((i) => JSON.stringify(i).includes(ns)).length === before;
  });
  try {
    await fn();
  } finally {
    for (const t of triggers) await admin.apply(t, "dynamo-pool-relay/test-install", { force: true });
  }
}

/** The DGD (mid-rollout) and DynamoPoolRelay of the session, created anew while no Trigger routes their events. */
async function recreateUnseen(ns: string): Promise<void> {
  await unrouted(ns, async () => {
    await admin.request("DELETE", `/apis/nvidia.com/v1alpha1/namespaces/${ns}/dynamopoolrelays/g1`);
    await admin.request("DELETE", `/apis/nvidia.com/v1beta1/namespaces/${ns}/dynamographdeployments/g1`);
    await eventually("the children are garbage-collected", async () =>
      Object.values(await children(admin, ns)).every((o) => o === undefined),
    );
    await admin.apply(dprObject(ns, "g1"), TEST_MANAGER);
    const dgd = await admin.apply<KubeObject>(dgdObject(ns, "g1"), TEST_MANAGER);
    await admin.replaceStatus({
      ...dgd,
      status: {
        components: { decode: { componentKind: "Deployment", componentNames: HASHES.map((h) => `g1-decode-${h}`) } },
      },
    });
    // Let the sources' events about them reach the Broker while nothing routes them.
    await new Promise((r) => setTimeout(r, 2000));
  });
  // Nothing reconciled them: they exist, unobserved, without children.
  expect(await admin.get(dgdRef(ns, "g1"))).toBeDefined();
  expect((await admin.get<{ status?: unknown }>(dprRef(ns, "g1")))?.status).toBeUndefined();
  expect(Object.values(await children(admin, ns)).every((o) => o === undefined)).toBe(true);
}

describe("record and replay", () => {
  it("replays a recorded publish-then-rollout session, in order and shuffled, to the state of the original", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "poolrelay-replay-")), "events.jsonl");
    const stopRecording = new AbortController();
    const recording = record(tap.url, file, stopRecording.signal, () => {});

    // 1. The original session.
    const ns = await freshNamespace("replay");
    await admin.apply(dprObject(ns, "g1"), TEST_MANAGER);
    await admin.apply(dgdObject(ns, "g1"), TEST_MANAGER);
    await settledDpr(ns, "g1", "is published", (d) => condition(d, "ServicePublished")?.status === "True");
    await rollout(ns, HASHES);
    await settledDpr(ns, "g1", "lists both worker generations", (d) => d.status?.["workerNamespaces"]?.length === 2);
    await eventually("the session's events are recorded", async () => {
      const n = tap.events.length;
      await new Promise((r) => setTimeout(r, 1500));
      return tap.events.length === n;
    });
    stopRecording.abort();
    await recording;
    const original = await state(ns);
    expect(original.sources!["sources.json"]).toContain(`${ns}-g1-bbbb2222`);
    expect(original.sourcesAtLiveVersion).toBe(true);

    const about = (e: CloudEvent) => e.extensions["namespace"] === ns || e.subject === `${ns}/g1`;
    const events = readEvents(file).filter(about);
    expect(events.length).toBe(tap.events.filter(about).length);
    // A DynamoPoolRelay created before its DGD is first withdrawn (no DGD yet), then published.
    const types = [...new Set(events.map((e) => e.type))];
    expect(types).toEqual(
      expect.arrayContaining([
        "dev.knative.apiserver.resource.add",
        "dev.knative.apiserver.resource.update",
        "com.nvidia.dynamo.poolrelay.reconcile.v1",
        "com.nvidia.dynamo.poolrelay.applied.v1",
      ]),
    );

    // 2. Replays into the same objects, created anew where no event of theirs was routed.
    for (const [order, mode] of [
      [events, "binary"],
      [shuffled(events), "structured"],
    ] as const) {
      await recreateUnseen(ns);
      const fns = ["eligibility", "apply"] as const;
      const before = fns.map((fn) => invocations(fn).length);
      const handledSince = () => fns.flatMap((fn, i) => invocations(fn).slice(before[i]));
      const result = await replay(order, { to: brokerIngress(), mode, rate: 0 }, () => {});
      expect(result).toEqual({ sent: events.length, failed: 0 });
      // Two minutes: on a loaded machine (npm test's lanes) a delivery the function answered late
      // waits out the Broker's backoff before its retry.
      await eventually(
        `the ${mode} replay reproduces the original state`,
        async () => JSON.stringify(await state(ns)) === JSON.stringify(original) || undefined,
        120_000,
      );
      expect(await state(ns)).toEqual(original);
      // The replayed events did it (the source's own requeue of the unobserved pair would come
      // later); the functions' lines reach the log a moment after their writes (the log agent's lag).
      const replayed = new Set(events.map((e) => e.id));
      await eventually(
        `the functions log their runs on the ${mode} replay's events`,
        async () => handledSince().some((i) => replayed.has(i.event.id)),
        10_000,
      );
    }
  }, 360_000);
});
