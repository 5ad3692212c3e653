// status shares runs among the events for one key that arrive at once (child changes and apply's
// reports alike, their inputs merged), and answers a child event carrying a version its last run
// read without a request. The adapter is an in-memory fake that records every call. The handler
// keeps per-process state across tests (as it does across invocations), so a test that depends on
// it starts from a Deployment the test before it did not leave recorded.
import { describe, expect, it } from "vitest";
import { desiredChildren } from "../../shared/apply-plan.ts";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { parseConfig } from "../../shared/config.ts";
import { decide, type Decision } from "../../shared/decide.ts";
import { EventType, productEvent } from "../../shared/events.ts";
import type { KubeObject } from "../../shared/kube/client.ts";
import { FakeKube } from "../../test/unit/fake-kube.ts";
import { LABELS, appliedHashes, liveChildren } from "../../test/live-children.ts";
import type { Context } from "../runtime/handler.ts";
import { status } from "./handler.ts";

const NOW = "2026-03-01T00:00:00Z";
const UID = "11111111-2222-3333-4444-555555555555";
/** With a batch period (STATUS_BATCH_MS), as an operator may set it; the default is none. */
const config = parseConfig({ STATUS_BATCH_MS: "250" });
const dpr = {
  apiVersion: "nvidia.com/v1alpha1",
  kind: "DynamoPoolRelay",
  metadata: { name: "g1", namespace: "team-a", uid: UID, generation: 1, resourceVersion: "7" },
  spec: { image: "relay:1", clusterID: "dc-1" },
  // As apply's first run leaves it before the children carry its decision: a child change before any
  // status is written awaits apply (shared/read-plan.ts), which the "before apply wrote" test shows.
  status: {
    conditions: [
      {
        type: "Ready",
        status: "False",
        reason: "Reconciling",
        message: "the children do not carry the decision yet",
        lastTransitionTime: "2026-03-01T00:00:00Z",
      },
    ],
  },
};
const dgd = {
  apiVersion: config.dgdApiVersion,
  kind: "DynamoGraphDeployment",
  metadata: { name: "g1", namespace: "team-a" },
  spec: { components: [{ name: "w", type: "worker" }] },
};
/** `sleep` waits out the batch period; by default it has passed at once. */
const context = (kube: FakeKube, sleep: (ms: number) => Promise<void> = async () => {}, cfg = config): Context => ({
  kube: kube.client,
  config: cfg,
  now: () => NOW,
  emit: async () => {
    throw new Error("status never emits");
  },
  sleep,
});
/** A batch period that ends when the test says, recording how long it was asked to be. */
function batchPeriod() {
  const asked: number[] = [];
  let end!: () => void;
  const ended = new Promise<void>((r) => (end = r));
  return { asked, end, sleep: (ms: number) => (asked.push(ms), ended) };
}
const settle = () => new Promise((r) => setTimeout(r, 0));

/** The DynamoPoolRelay, its DGD and the six children carrying the decision; the Deployment with `readyReplicas` Ready. */
function world(
  readyReplicas: number,
  omit: readonly string[] = [],
  edit: (d: KubeObject) => KubeObject = (d) => d,
): { kube: FakeKube; deployment: KubeObject } {
  const decision = decide(dpr, dgd, config.defaults) as Extract<Decision, { action: "apply" }>;
  const live = liveChildren({
    dprUid: UID,
    clusterID: "dc-1",
    connectionRevision: decision.connectionRevision,
    sourcesText: decision.sources.text,
    appliedHash: appliedHashes(desiredChildren(decision)),
    deploymentStatus: {
      observedGeneration: 1,
      replicas: 2,
      updatedReplicas: 2,
      readyReplicas,
      availableReplicas: readyReplicas,
    },
  });
  const children = Object.entries(live)
    .filter(([kind]) => !omit.includes(kind))
    .map(([kind, o]) => (kind === "Deployment" ? edit(o as unknown as KubeObject) : (o as unknown as KubeObject)));
  return { kube: new FakeKube([dpr, dgd, ...children]), deployment: edit(live.Deployment as unknown as KubeObject) };
}

let ids = 0;
/** A child event; its object only names the child unless given whole. */
const childEvent = (kind: string, type: "add" | "update" | "delete", object?: KubeObject): CloudEvent => ({
  specversion: "1.0",
  id: `e${++ids}`,
  source: "https://10.96.0.1:443",
  type: `dev.knative.apiserver.resource.${type}`,
  time: NOW,
  datacontenttype: "application/json",
  extensions: {},
  data: object ?? { apiVersion: "v1", kind, metadata: { name: "g1-pool-relay", namespace: "team-a", labels: LABELS } },
});
const applied = (): CloudEvent =>
  productEvent(
    EventType.Applied,
    { namespace: "team-a", name: "g1", uid: UID, generation: 1, applied: [], unchanged: [], skipped: [] },
    { source: "/test", cause: `a${++ids}`, time: NOW },
  );
const refused = (): CloudEvent =>
  productEvent(
    EventType.Rejected,
    {
      namespace: "team-a",
      name: "g1",
      uid: UID,
      generation: 1,
      reason: "ApplyFailed",
      message: "spec.replicas: Invalid value",
    },
    { source: "/test", cause: `r${++ids}`, time: NOW },
  );
const dprReads = (kube: FakeKube) => kube.ops("get").filter((c) => c.ref.kind === "DynamoPoolRelay").length;
const readyOf = (write: { object: KubeObject } | undefined) =>
  (write?.object["status"] as { conditions?: { type: string; reason: string }[] } | undefined)?.conditions?.find(
    (c) => c.type === "Ready",
  );

describe("status under a burst", () => {
  it("lets the child changes of one batch period share one run, which starts when the period has passed", async () => {
    const { kube } = world(0);
    const period = batchPeriod();
    const answers = [1, 2, 3].map(() => status(childEvent("Deployment", "update"), context(kube, period.sleep)));
    await settle();
    expect(period.asked).toEqual([config.statusBatchMs]);
    expect(config.statusBatchMs).toBe(250);
    expect(parseConfig({}).statusBatchMs).toBe(0);
    expect(kube.calls).toEqual([]);
    period.end();
    const results = await Promise.all(answers);
    expect(dprReads(kube)).toBe(1);
    expect(results.map((r) => r.fields?.["coalesced"])).toEqual([undefined, true, true]);
    expect(results[2]!.reply).toBeUndefined();
    expect(results[2]!.decision).toBe(results[0]!.decision);
  });

  it("starts a waiting run at once for a report from apply, which shares it and shows its failure", async () => {
    const { kube } = world(0, ["Deployment"]);
    const period = batchPeriod();
    const results = await Promise.all([
      status(childEvent("ConfigMap", "update"), context(kube, period.sleep)),
      status(refused(), context(kube, period.sleep)),
      status(childEvent("ConfigMap", "update"), context(kube, period.sleep)),
    ]);
    expect(dprReads(kube)).toBe(1);
    expect(results.map((r) => r.fields?.["coalesced"])).toEqual([undefined, true, true]);
    const writes = kube.ops("replaceStatus");
    expect(writes).toHaveLength(1);
    expect(readyOf(writes[0])?.reason).toBe("ApplyFailed");
  });

  it("runs a report at once, without asking for a batch period", async () => {
    const { kube } = world(1);
    const period = batchPeriod();
    expect((await status(applied(), context(kube, period.sleep))).decision).toBe("StatusWritten");
    expect(period.asked).toEqual([]);
  });

  it("does not wait with STATUS_BATCH_MS=0", async () => {
    const { kube } = world(1, ["Service"]);
    const period = batchPeriod();
    const immediate = parseConfig({ STATUS_BATCH_MS: "0" });
    expect(immediate.statusBatchMs).toBe(0);
    expect((await status(childEvent("Service", "update"), context(kube, period.sleep, immediate))).decision).toBe(
      "StatusWritten",
    );
    expect(period.asked).toEqual([]);
  });

  it("answers changes during a run with one next run, which does not wait for a batch period", async () => {
    const { kube } = world(0);
    const first = status(applied(), context(kube));
    const period = batchPeriod();
    const during = [1, 2].map(() => status(childEvent("Deployment", "update"), context(kube, period.sleep)));
    const results = await Promise.all([first, ...during]);
    expect(dprReads(kube)).toBe(2);
    expect(period.asked).toEqual([]);
    expect(results.map((r) => r.fields?.["coalesced"])).toEqual([undefined, undefined, true]);
  });

  it("asks for a reconcile from a shared run when any of the changed children it answers is off the decision", async () => {
    const { kube, deployment } = world(0, ["Deployment"]);
    const [owner, ...shared] = await Promise.all([
      status(childEvent("EndpointSlice", "update"), context(kube)),
      status(childEvent("Deployment", "delete", deployment), context(kube)),
      status(childEvent("EndpointSlice", "update"), context(kube)),
    ]);
    expect(dprReads(kube)).toBe(1);
    expect(owner.reply).toMatchObject({
      type: EventType.Reconcile,
      data: { namespace: "team-a", name: "g1", cause: "Drift" },
    });
    expect(shared.map((r) => [r.reply, r.fields?.["coalesced"]])).toEqual([
      [undefined, true],
      [undefined, true],
    ]);
  });
});

describe("a child event whose object is, in all status reads, what the last run here read", () => {
  const withStatus = (d: KubeObject, status: Record<string, unknown>, resourceVersion: string): KubeObject => ({
    ...d,
    metadata: { ...d.metadata, resourceVersion },
    status: { ...(d["status"] as object), ...status },
  });

  it("costs no request at the very version the run read, and one read of the DynamoPoolRelay when only the server's bookkeeping or the Deployment's conditions moved; a change status reads, or a delete, reads everything", async () => {
    const { kube, deployment } = world(1);
    await status(applied(), context(kube));
    const afterRun = kube.calls.length;
    expect(afterRun).toBeGreaterThan(0);
    const seen = await status(childEvent("Deployment", "update", deployment), context(kube));
    expect(seen).toMatchObject({
      decision: "Seen",
      fields: { version: { kind: "Deployment", name: "g1-pool-relay" } },
    });
    expect(kube.calls).toHaveLength(afterRun);
    const conditionsOnly = withStatus(
      deployment,
      { conditions: [{ type: "Progressing", status: "True", reason: "NewReplicaSetAvailable" }] },
      "9001",
    );
    expect(await status(childEvent("Deployment", "update", conditionsOnly), context(kube))).toMatchObject({
      decision: "Seen",
      fields: { statusUnchanged: true },
    });
    expect(kube.calls).toHaveLength(afterRun + 1);
    expect(dprReads(kube)).toBe(2);
    await status(
      childEvent("Deployment", "update", withStatus(deployment, { readyReplicas: 2 }, "9002")),
      context(kube),
    );
    expect(dprReads(kube)).toBe(3);
    await status(childEvent("Deployment", "delete", deployment), context(kube));
    expect(dprReads(kube)).toBe(4);
  });

  it("is read again at a newer version when the status was written since by another process (another status pod, apply), which may have read the child as it changed and changed back", async () => {
    const { kube, deployment } = world(1);
    await status(applied(), context(kube));
    const shown = kube.stored("DynamoPoolRelay")!;
    expect(shown["status"]).toMatchObject({ readyReplicas: 1 });
    const again = withStatus(deployment, {}, "9003");
    expect((await status(childEvent("Deployment", "update", again), context(kube))).decision).toBe("Seen");
    // Elsewhere, a run read the Deployment with no Ready replica in between, and showed that.
    await kube.client.replaceStatus({ ...shown, status: { ...(shown["status"] as object), readyReplicas: 0 } });
    const back = withStatus(deployment, {}, "9004");
    expect((await status(childEvent("Deployment", "update", back), context(kube))).decision).toBe("StatusWritten");
    expect(kube.stored("DynamoPoolRelay")!["status"]).toMatchObject({ readyReplicas: 1 });
    // A run that writes nothing vouches for the status it read.
    expect((await status(applied(), context(kube))).decision).toBe("Unchanged");
    const reads = dprReads(kube);
    expect(
      (await status(childEvent("Deployment", "update", withStatus(deployment, {}, "9005")), context(kube))).decision,
    ).toBe("Seen");
    expect(dprReads(kube)).toBe(reads + 1);
  });

  it("costs no request either when it is older than what the last run read (a late or reordered event), whatever it shows", async () => {
    const { kube, deployment } = world(1);
    await status(applied(), context(kube));
    const afterRun = kube.calls.length;
    const read = (await kube.client.get({
      apiVersion: "apps/v1",
      kind: "Deployment",
      namespace: "team-a",
      name: "g1-pool-relay",
    }))!;
    const older = String(Number(read.metadata.resourceVersion) - 1);
    const late = withStatus(deployment, { readyReplicas: 0, availableReplicas: 0 }, older);
    expect(await status(childEvent("Deployment", "update", late), context(kube))).toMatchObject({
      decision: "Stale",
      fields: { version: { kind: "Deployment", resourceVersion: older } },
    });
    expect(kube.calls).toHaveLength(afterRun + 1);
    const newer = withStatus(
      deployment,
      { readyReplicas: 0, availableReplicas: 0 },
      String(Number(read.metadata.resourceVersion) + 1),
    );
    expect((await status(childEvent("Deployment", "update", newer), context(kube))).decision).not.toBe("Stale");
    expect(dprReads(kube)).toBe(2);
  });

  it("is read again when the run that read it found it off the decision without answering for it: its own event asks for the repair", async () => {
    // Scaled to zero by someone; the runs before its own event were about other changes.
    const { kube, deployment } = world(2, [], (d) => ({ ...d, spec: { ...(d["spec"] as object), replicas: 0 } }));
    const first = await status(applied(), context(kube));
    expect(first.fields?.["reflects"]).toBe(false);
    expect(first.reply).toBeUndefined();
    const own = await status(childEvent("Deployment", "update", deployment), context(kube));
    expect(own.decision).not.toBe("Seen");
    expect(own.reply).toMatchObject({
      type: EventType.Reconcile,
      data: { namespace: "team-a", name: "g1", cause: "Drift" },
    });
    // The next test starts with nothing recorded: a run that finds the DynamoPoolRelay gone forgets it.
    await kube.deleteExact({ apiVersion: dpr.apiVersion, kind: dpr.kind, namespace: "team-a", name: "g1" }, UID);
    expect((await status(applied(), context(kube))).decision).toBe("Gone");
  });

  it("is read again when the run that read it failed to write", async () => {
    const { kube, deployment } = world(2);
    kube.failWith = (call) => (call.op === "replaceStatus" ? new Error("connection reset") : undefined);
    await expect(status(applied(), context(kube))).rejects.toThrow("connection reset");
    expect(kube.ops("replaceStatus")).toHaveLength(1);
    kube.failWith = () => undefined;
    const before = dprReads(kube);
    expect((await status(childEvent("Deployment", "update", deployment), context(kube))).decision).not.toBe("Seen");
    expect(dprReads(kube)).toBe(before + 1);
  });

  it("is judged, when equal at a newer version, against the run here in flight once it has ended: that run may have read the child before this version", async () => {
    const { kube, deployment } = world(1);
    await status(applied(), context(kube));
    const deploymentRef = { apiVersion: "apps/v1", kind: "Deployment", namespace: "team-a", name: "g1-pool-relay" };
    const notReady = withStatus(deployment, { readyReplicas: 0, availableReplicas: 0 }, "9010");
    kube.put(notReady);
    // The run for the change holds at its status write, having read the Deployment not Ready.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const write = kube.replaceStatus.bind(kube);
    kube.replaceStatus = async (object: KubeObject) => (await held, write(object));
    const changed = status(childEvent("Deployment", "update", notReady), context(kube));
    await settle();
    expect((await kube.client.get(deploymentRef))!["status"]).toMatchObject({ readyReplicas: 0 });
    // Meanwhile the Deployment is Ready again, equal to what the run before read.
    const back = withStatus(deployment, {}, "9011");
    kube.put(back);
    const returned = status(childEvent("Deployment", "update", back), context(kube));
    await settle();
    release();
    expect((await changed).decision).toBe("StatusWritten");
    expect((await returned).decision).toBe("StatusWritten");
    expect(kube.stored("DynamoPoolRelay")!["status"]).toMatchObject({ readyReplicas: 1 });
  });

  it("is read again once the DynamoPoolRelay was found gone", async () => {
    const { kube, deployment } = world(1);
    await status(applied(), context(kube));
    expect((await status(childEvent("Deployment", "update", deployment), context(kube))).decision).toBe("Seen");
    await kube.deleteExact({ apiVersion: dpr.apiVersion, kind: dpr.kind, namespace: "team-a", name: "g1" }, UID);
    expect((await status(applied(), context(kube))).decision).toBe("Gone");
    kube.put(dpr);
    const before = dprReads(kube);
    expect((await status(childEvent("Deployment", "update", deployment), context(kube))).decision).not.toBe("Seen");
    expect(dprReads(kube)).toBe(before + 1);
  });
});

describe("before apply wrote any status", () => {
  const unwritten = (kube: FakeKube) => {
    const { status: _s, ...bare } = dpr;
    kube.put(bare);
    return kube;
  };
  it("a child change awaits apply, which shows the status its writes make: one read, no write", async () => {
    const kube = unwritten(world(1).kube);
    const r = await status(childEvent("Deployment", "update"), context(kube));
    expect(r.decision).toBe("AwaitsApply");
    expect(kube.ops("get").map((c) => c.ref.kind)).toEqual(["DynamoPoolRelay"]);
    expect(kube.ops("replaceStatus")).toEqual([]);
  });

  it("a report from apply is shown all the same: every child read, the status written", async () => {
    const kube = unwritten(world(1).kube);
    const r = await status(applied(), context(kube));
    expect(r.decision).toBe("StatusWritten");
    expect(kube.ops("get").map((c) => c.ref.kind)).toContain("Deployment");
    expect(kube.ops("replaceStatus")).toHaveLength(1);
  });
});

describe("a child event that shows apply's own write as the last change", () => {
  it("costs no request, as apply's report brings the run that reads it; the same child edited by someone after apply is read", async () => {
    const { kube } = world(1);
    const configMap = (await kube.client.get({
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: "team-a",
      name: "g1-pool-relay",
    }))!;
    const before = kube.calls.length;
    expect(await status(childEvent("ConfigMap", "update", configMap), context(kube))).toMatchObject({
      decision: "AwaitsReport",
      fields: { version: { kind: "ConfigMap" } },
    });
    expect(kube.calls).toHaveLength(before);
    const managedFields = [
      ...(configMap.metadata["managedFields"] as object[]),
      { manager: "kubectl-edit", operation: "Update", apiVersion: "v1", time: "2026-01-01T00:05:00Z" },
    ];
    const edited = { ...configMap, metadata: { ...configMap.metadata, managedFields }, data: { "sources.json": "{}" } };
    expect((await status(childEvent("ConfigMap", "update", edited), context(kube))).decision).not.toBe("AwaitsReport");
    expect(dprReads(kube)).toBe(1);
  });

  it("is read when it is a delete", async () => {
    const { kube } = world(1);
    const configMap = (await kube.client.get({
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: "team-a",
      name: "g1-pool-relay",
    }))!;
    expect((await status(childEvent("ConfigMap", "delete", configMap), context(kube))).decision).not.toBe(
      "AwaitsReport",
    );
    expect(dprReads(kube)).toBe(1);
  });
});

/** An EndpointSlice of the Relay's Service with one endpoint per entry, ready as given. */
const slice = (ready: (boolean | null)[], resourceVersion?: string) =>
  ({
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    addressType: "IPv4",
    metadata: {
      name: "g1-pool-relay-x7k2q",
      namespace: "team-a",
      labels: { ...LABELS, "kubernetes.io/service-name": "g1-pool-relay" },
      ...(resourceVersion ? { resourceVersion } : {}),
    },
    endpoints:
      ready.length === 0 ? null : ready.map((r, i) => ({ addresses: [`10.0.0.${i + 1}`], conditions: { ready: r } })),
  }) as unknown as KubeObject;

describe("an EndpointSlice added with no ready endpoint", () => {
  it("costs no request (status shows the ready endpoints' count, which it leaves as it was); one with a ready endpoint, and any update, is read", async () => {
    const { kube } = world(1);
    expect(await status(childEvent("EndpointSlice", "add", slice([])), context(kube))).toMatchObject({
      decision: "NoEndpointAdded",
      fields: { version: { kind: "EndpointSlice" } },
    });
    expect(await status(childEvent("EndpointSlice", "add", slice([false, false])), context(kube))).toMatchObject({
      decision: "NoEndpointAdded",
    });
    expect(kube.calls).toHaveLength(0);
    // Readiness unknown (null) counts as ready, as the EndpointSlice API says.
    expect((await status(childEvent("EndpointSlice", "add", slice([false, null])), context(kube))).decision).toBe(
      "StatusWritten",
    );
    expect(dprReads(kube)).toBe(1);
    expect((await status(childEvent("EndpointSlice", "update", slice([])), context(kube))).decision).not.toBe(
      "NoEndpointAdded",
    );
    expect(dprReads(kube)).toBe(2);
  });
});

describe("a change of a child status shows, under a status that vouches for the rest", () => {
  /** world(1) with the status a run computed from it stored, and a Deployment version no run here read yet. */
  async function settled(rv: string): Promise<{ kube: FakeKube; moved: KubeObject }> {
    const { kube, deployment } = world(1);
    await status(applied(), context(kube));
    kube.put(kube.ops("replaceStatus").at(-1)!.object);
    kube.calls.length = 0;
    const moved = {
      ...deployment,
      metadata: { ...deployment.metadata, resourceVersion: rv },
      status: { ...(deployment["status"] as object), readyReplicas: 2, availableReplicas: 2 },
    };
    kube.put(moved);
    return { kube, moved };
  }
  const readKinds = (kube: FakeKube) =>
    kube.calls.flatMap((c) => (c.op === "get" ? [c.ref.kind] : c.op === "list" ? [c.kind] : []));

  it("reads the DynamoPoolRelay first, then only the Deployment and the EndpointSlices (not the DGD, whose decision the status records, nor the Service, which it shows), and shows the new counts", async () => {
    const { kube, moved } = await settled("9101");
    const result = await status(childEvent("Deployment", "update", moved), context(kube));
    expect(result).toMatchObject({ decision: "StatusWritten", fields: { childReads: "shown" } });
    expect(readKinds(kube)).toEqual(["DynamoPoolRelay", "Deployment", "EndpointSlice"]);
    expect(kube.readBeforeDpr).toEqual([]);
    expect(kube.ops("replaceStatus").map((c) => c.object["status"])).toEqual([
      expect.objectContaining({ readyReplicas: 2 }),
    ]);
  });

  it("reads only the DynamoPoolRelay for a Deployment change the stored status shows already (the same counts, a new revision annotation), and the children for one it does not", async () => {
    const { kube, moved } = await settled("9108");
    // As the stored status was computed from it (world(1): 1 of 2 ready), with a revision annotation added.
    const annotated = {
      ...moved,
      metadata: {
        ...moved.metadata,
        resourceVersion: "9109",
        annotations: { ...(moved.metadata["annotations"] as object), "deployment.kubernetes.io/revision": "2" },
      },
      status: { ...(moved["status"] as object), readyReplicas: 1, availableReplicas: 1 },
    };
    expect(await status(childEvent("Deployment", "update", annotated), context(kube))).toMatchObject({
      decision: "Unchanged",
      fields: { childReads: "none" },
    });
    expect(readKinds(kube)).toEqual(["DynamoPoolRelay"]);
    expect(kube.ops("replaceStatus")).toEqual([]);
    // The newer counts (2 ready) are not what the status shows: read, and shown.
    expect(await status(childEvent("Deployment", "update", moved), context(kube))).toMatchObject({
      decision: "StatusWritten",
      fields: { childReads: "shown" },
    });
    expect(readKinds(kube)).toEqual(["DynamoPoolRelay", "DynamoPoolRelay", "Deployment", "EndpointSlice"]);
  });

  it("reads the Deployment and the EndpointSlices for an EndpointSlice's change, not the Service, and shows the listener with the Service as the stored status shows it", async () => {
    const { kube } = await settled("9110");
    const before = (await kube.client.get({
      apiVersion: "nvidia.com/v1alpha1",
      kind: "DynamoPoolRelay",
      namespace: "team-a",
      name: "g1",
    }))!["status"] as { readyReplicas: number; conditions: { type: string; reason: string }[] };
    expect(before.conditions.find((c) => c.type === "Ready")?.reason).toBe("ListenerUnavailable");
    kube.calls.length = 0;
    const ready = slice([true], "9111");
    kube.put(ready);
    expect(await status(childEvent("EndpointSlice", "update", ready), context(kube))).toMatchObject({
      decision: "StatusWritten",
      fields: { childReads: "shown", ready: "True", reason: "Ready" },
    });
    expect(readKinds(kube)).toEqual(["DynamoPoolRelay", "Deployment", "EndpointSlice"]);
    const written = kube.ops("replaceStatus").at(-1)!.object["status"] as {
      readyReplicas: number;
      serviceEndpoint: string;
      conditions: { type: string; reason: string }[];
    };
    // The Deployment as read: 2 ready, where the stored status showed 1.
    expect(before.readyReplicas).toBe(1);
    expect(written).toMatchObject({
      readyReplicas: 2,
      serviceEndpoint: expect.stringContaining("g1-pool-relay") as unknown,
    });
    expect(Object.fromEntries(written.conditions.map((c) => [c.type, c.reason]))).toMatchObject({
      ListenerAvailable: "EndpointsReady",
      ServicePublished: "Published",
    });
  });

  it("reads the Service for its own change", async () => {
    const { kube } = await settled("9112");
    const live = (await kube.client.get({
      apiVersion: "v1",
      kind: "Service",
      namespace: "team-a",
      name: "g1-pool-relay",
    }))!;
    // Someone else's label: not apply's own write.
    const service = {
      ...live,
      metadata: {
        ...live.metadata,
        resourceVersion: "9113",
        managedFields: [],
        labels: { ...(live.metadata["labels"] as object), team: "a" },
      },
    };
    kube.put(service);
    kube.calls.length = 0;
    expect(await status(childEvent("Service", "update", service), context(kube))).toMatchObject({
      fields: { childReads: "shown" },
    });
    expect(readKinds(kube)).toEqual(["DynamoPoolRelay", "Deployment", "Service", "EndpointSlice"]);
  });

  it("still knows the Service a run read after a later run did not read it: its event again costs no request", async () => {
    const { kube, moved } = await settled("9115");
    const live = (await kube.client.get({
      apiVersion: "v1",
      kind: "Service",
      namespace: "team-a",
      name: "g1-pool-relay",
    }))!;
    const service = {
      ...live,
      metadata: {
        ...live.metadata,
        resourceVersion: "9116",
        managedFields: [],
        labels: { ...(live.metadata["labels"] as object), team: "a" },
      },
    };
    kube.put(service);
    // It reads the moved Deployment too, and shows it.
    expect(await status(childEvent("Service", "update", service), context(kube))).toMatchObject({
      decision: "StatusWritten",
      fields: { childReads: "shown" },
    });
    expect(readKinds(kube)).toContain("Service");
    kube.put(kube.ops("replaceStatus").at(-1)!.object);
    const back = {
      ...moved,
      metadata: { ...moved.metadata, resourceVersion: "9117" },
      status: { ...(moved["status"] as object), readyReplicas: 1, availableReplicas: 1 },
    };
    kube.put(back);
    kube.calls.length = 0;
    expect((await status(childEvent("Deployment", "update", back), context(kube))).decision).toBe("StatusWritten");
    expect(readKinds(kube)).not.toContain("Service");
    kube.calls.length = 0;
    expect(await status(childEvent("Service", "update", service), context(kube))).toMatchObject({ decision: "Seen" });
    expect(kube.calls).toEqual([]);
  });

  it("reads the DGD and every child when the children are off the recorded decision (a withdrawal that deleted the Service before its status was written), and shows the withdrawal", async () => {
    const { kube } = await settled("9104");
    const service = (await kube.client.get({
      apiVersion: "v1",
      kind: "Service",
      namespace: "team-a",
      name: "g1-pool-relay",
    }))!;
    await kube.client.deleteExact(
      { apiVersion: config.dgdApiVersion, kind: "DynamoGraphDeployment", namespace: "team-a", name: "g1" },
      "dgd-uid",
    );
    await kube.client.deleteExact(
      { apiVersion: "v1", kind: "Service", namespace: "team-a", name: "g1-pool-relay" },
      UID,
    );
    kube.calls.length = 0;
    const result = await status(childEvent("Service", "delete", service), context(kube));
    expect(result).toMatchObject({
      decision: "StatusWritten",
      fields: { childReads: "all", ready: "False", reason: "NotEligible" },
    });
    expect(result.reply).toBeUndefined();
    expect(readKinds(kube)).toContain("DynamoGraphDeployment");
    const conditions = (
      kube.ops("replaceStatus").at(-1)!.object["status"] as { conditions: { type: string; reason: string }[] }
    ).conditions;
    expect(Object.fromEntries(conditions.map((c) => [c.type, c.reason]))).toMatchObject({
      Ready: "NotEligible",
      ServicePublished: "Withdrawn",
    });
  });

  it("reads the DGD and every child when a report from apply shares the run with a Deployment change, and shows the rollout apply wrote but did not show", async () => {
    const { kube, moved } = await settled("9106");
    // Apply's rollout: the DGD moved to new workers, and apply wrote their sources document, but
    // lost its status write to a concurrent one; the ConfigMap's event waits for its report.
    const rolled = {
      ...dgd,
      status: { components: { w: { componentKind: "Deployment", componentNames: ["g1-w-bbbb2222"] } } },
    };
    const decision = decide(dpr, rolled, config.defaults) as Extract<Decision, { action: "apply" }>;
    const live = liveChildren({
      dprUid: UID,
      clusterID: "dc-1",
      connectionRevision: decision.connectionRevision,
      sourcesText: decision.sources.text,
      appliedHash: appliedHashes(desiredChildren(decision)),
    });
    kube.put(rolled);
    kube.put({
      ...(live.ConfigMap as unknown as KubeObject),
      metadata: { ...(live.ConfigMap as unknown as KubeObject).metadata, resourceVersion: "9107" },
    });
    kube.calls.length = 0;
    const period = batchPeriod();
    const results = await Promise.all([
      status(childEvent("Deployment", "update", moved), context(kube, period.sleep)),
      status(applied(), context(kube, period.sleep)),
    ]);
    expect(results.map((r) => r.fields?.["coalesced"])).toEqual([undefined, true]);
    expect(results[0]).toMatchObject({ fields: { childReads: "all" } });
    expect(readKinds(kube)).toContain("DynamoGraphDeployment");
    expect(kube.ops("replaceStatus").at(-1)!.object["status"]).toMatchObject({
      workerNamespaces: decision.workerNamespaces,
      sourcesRevision: decision.sources.revision,
    });
  });

  it("reads every child on a ConfigMap's change", async () => {
    const { kube } = await settled("9102");
    const configMap = (await kube.client.get({
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: "team-a",
      name: "g1-pool-relay",
    }))!;
    kube.calls.length = 0;
    const edited = {
      ...configMap,
      metadata: { ...configMap.metadata, resourceVersion: "9103", managedFields: [] },
      data: { "sources.json": "{}" },
    };
    kube.put(edited);
    expect(await status(childEvent("ConfigMap", "update", edited), context(kube))).toMatchObject({
      fields: { childReads: "all" },
    });
    expect(readKinds(kube)[0]).toBe("DynamoPoolRelay");
    expect(kube.readBeforeDpr).toEqual([]);
    expect(new Set(readKinds(kube).slice(1))).toEqual(
      new Set([
        "DynamoGraphDeployment",
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "ConfigMap",
        "Deployment",
        "Service",
        "EndpointSlice",
      ]),
    );
  });
});
