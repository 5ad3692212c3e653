// The apply handler's reply as the README's event contract states it (applied.v1 with its
// `applied` / `unchanged` / `skipped` lists, withdrawn.v1 with `service: deleted | absent |
// notOwned`), and the withdrawal's delete: only of a Service this DynamoPoolRelay controls, with
// the UID precondition of the very Service read. The adapter is an in-memory fake that records
// every call.
import { describe, expect, it } from "vitest";
import { desiredChildren } from "../../shared/apply-plan.ts";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { parseConfig } from "../../shared/config.ts";
import { decide, type Decision } from "../../shared/decide.ts";
import { EventType, productEvent, type ReconcileCause } from "../../shared/events.ts";
import type { KubeObject } from "../../shared/kube/client.ts";
import { ApiError } from "../../shared/kube/errors.ts";
import { APPLY_FIELD_MANAGER } from "../../shared/names.ts";
import { FakeKube } from "../../test/unit/fake-kube.ts";
import type { Context } from "../runtime/handler.ts";
import { status } from "../status/handler.ts";
import { apply } from "./handler.ts";
import { appliedHashes, liveChildren } from "../../test/live-children.ts";

const NOW = "2026-03-01T00:00:00Z";
const config = parseConfig({});
const DPR_UID = "dpr-uid-1";
const dpr = {
  apiVersion: "nvidia.com/v1alpha1",
  kind: "DynamoPoolRelay",
  metadata: { name: "g1", namespace: "team-a", uid: DPR_UID, generation: 4, resourceVersion: "7" },
  spec: { image: "relay:1", clusterID: "c" },
};
/** The DynamoPoolRelay once a status showed its children applied: apply reads them before it writes (planAbsent). */
const shownDpr = { ...dpr, status: { sourcesRevision: "shown-before" } };
const dgd = (annotations: Record<string, string> = {}) => ({
  apiVersion: config.dgdApiVersion,
  kind: "DynamoGraphDeployment",
  metadata: { name: "g1", namespace: "team-a", annotations },
  spec: { components: [{ name: "w", type: "worker" }] },
});
const SERVICE_REF = { apiVersion: "v1", kind: "Service", namespace: "team-a", name: "g1-pool-relay" };

const reconcile = (cause: ReconcileCause = "DGDChanged"): CloudEvent =>
  productEvent(
    EventType.Reconcile,
    { namespace: "team-a", name: "g1", cause },
    { source: "/test", cause: "r1", time: NOW },
  );
const context = (kube: FakeKube): Context => ({
  kube: kube.client,
  config,
  now: () => NOW,
  emit: async () => {
    throw new Error("apply never emits");
  },
  sleep: async () => {},
});

/** The children as the API server holds them after an apply of the current decision (controlled by the DynamoPoolRelay). */
function current(): Record<string, KubeObject> {
  const decision = decide(dpr, dgd(), config.defaults) as Extract<Decision, { action: "apply" }>;
  return liveChildren({
    dprUid: DPR_UID,
    clusterID: "c",
    connectionRevision: decision.connectionRevision,
    sourcesText: decision.sources.text,
    appliedHash: appliedHashes(desiredChildren(decision)),
  }) as Record<string, KubeObject>;
}
const foreign = (kind: string, apiVersion: string): KubeObject => ({
  apiVersion,
  kind,
  metadata: {
    name: "g1-pool-relay",
    namespace: "team-a",
    uid: `foreign-${kind}`,
    ownerReferences: [{ uid: "someone-else", controller: true }],
  },
});
const ownService = (
  uid: string,
  ownerReferences: unknown[] = [
    { apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", name: "g1", uid: DPR_UID, controller: true },
  ],
): KubeObject => ({
  ...SERVICE_REF,
  metadata: { name: "g1-pool-relay", namespace: "team-a", uid, ownerReferences },
  spec: { ports: [{ port: 5561 }] },
});

/** The kinds of the calls of one operation, in order. */
const kinds = (kube: FakeKube, op: "get" | "apply" | "list") =>
  kube.ops(op).map((c) => ("ref" in c ? c.ref.kind : "object" in c ? c.object.kind : c.kind));

describe("apply's applied.v1 reply", () => {
  it("lists exactly what it applied, what was unchanged and what it skipped (a foreign Service), in apply order", async () => {
    const live = current();
    const kube = new FakeKube([shownDpr, dgd(), ...Object.values(live)]);
    kube.put({ ...live["ConfigMap"]!, data: { "sources.json": "{}" } });
    kube.put(foreign("Service", "v1"));
    const result = await apply(reconcile(), context(kube));
    expect(result.reply?.type).toBe(EventType.Applied);
    expect(result.reply?.data).toEqual({
      namespace: "team-a",
      name: "g1",
      uid: DPR_UID,
      generation: 4,
      applied: ["ConfigMap"],
      unchanged: ["ServiceAccount", "Role", "RoleBinding", "Deployment"],
      skipped: [
        { kind: "Service", reason: "Service g1-pool-relay exists and is not controlled by this DynamoPoolRelay" },
      ],
      statusWritten: true,
    });
    // Written: the ConfigMap only (force: it is ours; pinned to the version read), never the foreign Service.
    expect(
      kube.ops("apply").map((c) => [c.object.kind, c.fieldManager, c.options, c.object.metadata.resourceVersion]),
    ).toEqual([["ConfigMap", APPLY_FIELD_MANAGER, { force: true }, live["ConfigMap"]!.metadata.resourceVersion]]);
  });

  it("lists every child as applied on a first apply, none forced, each created unread and only if absent", async () => {
    const kube = new FakeKube([dpr, dgd()]);
    const result = await apply(reconcile(), context(kube));
    const all = ["ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Deployment", "Service"];
    expect(result.reply?.data).toMatchObject({ applied: all, unchanged: [], skipped: [] });
    expect(result.fields).toMatchObject({ childReads: "none" });
    // The Deployment's server dry-run first, then each child once, in its wave, over a version no stored object has.
    const waves = ["ServiceAccount", "Role", "ConfigMap", "RoleBinding", "Deployment", "Service"];
    expect(kube.ops("apply").map((c) => [c.object.kind, c.options, c.object.metadata.resourceVersion])).toEqual([
      ["Deployment", { force: false, dryRun: true }, "1"],
      ...waves.map((k) => [k, { force: false }, "1"]),
    ]);
    expect(kube.calls.filter((c) => c.op === "get").map((c) => c.ref.kind)).toEqual([
      "DynamoPoolRelay",
      "DynamoGraphDeployment",
    ]);
    // A Service it just created has no EndpointSlices yet: none listed.
    expect(kube.ops("replaceStatus")).toHaveLength(1);
    expect(kube.ops("list")).toEqual([]);
    // The dry-run, six children, the status, the Published Event.
    expect(kube.stats).toEqual({ reads: 2, writes: 9 });
  });

  it("reads every child when one it would create unread exists (409), and applies only what is missing or differs", async () => {
    const live = current();
    const kube = new FakeKube([dpr, dgd(), live["ServiceAccount"]!, live["Role"]!]);
    const result = await apply(reconcile(), context(kube));
    expect(result.reply?.data).toMatchObject({
      applied: ["RoleBinding", "Deployment", "Service"],
      unchanged: ["ServiceAccount", "Role", "ConfigMap"],
      skipped: [],
    });
    expect(result.fields).toMatchObject({ childReads: "all" });
    // The dry-run passed (no Deployment); in the first wave the ServiceAccount and the Role refused and the
    // ConfigMap was created, so nothing after that wave was sent; then every child read, the missing ones applied.
    expect(
      kube.ops("apply").map((c) => [c.object.kind, c.object.metadata.resourceVersion, c.options.dryRun ?? false]),
    ).toEqual([
      ["Deployment", "1", true],
      ...["ServiceAccount", "Role", "ConfigMap"].map((k) => [k, "1", false]),
      ["Deployment", undefined, true],
      ...["RoleBinding", "Deployment", "Service"].map((k) => [k, undefined, false]),
    ]);
    expect(new Set(kube.calls.filter((c) => c.op === "get").map((c) => c.ref.kind))).toEqual(
      new Set([
        "DynamoPoolRelay",
        "DynamoGraphDeployment",
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "ConfigMap",
        "Deployment",
        "Service",
      ]),
    );
  });

  it("lists the EndpointSlices with the children, and counts none behind a Service that was not there (the garbage collector's to remove)", async () => {
    const { Service: _, ...live } = current();
    const staleSlice = {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: {
        name: "g1-pool-relay-abcde",
        namespace: "team-a",
        labels: { "kubernetes.io/service-name": "g1-pool-relay" },
      },
      endpoints: [{ conditions: { ready: true } }],
    } as never;
    const kube = new FakeKube([shownDpr, dgd(), ...Object.values(live), staleSlice]);
    const result = await apply(reconcile("Resync"), context(kube));
    expect(result.reply?.data).toMatchObject({ applied: ["Service"], statusWritten: true });
    expect(kube.ops("list").map((c) => c.kind)).toEqual(["EndpointSlice"]);
    const [written] = kube.ops("replaceStatus");
    expect(condition(written!.object, "ListenerAvailable")?.status).toBe("False");
    expect(kube.readBeforeDpr).toEqual(["DynamoGraphDeployment"]);
  });

  it("reads the children before it writes once a status showed them, though without a sources revision (a withdrawal's status: the Relay still runs)", async () => {
    const live = current();
    const kube = new FakeKube([{ ...dpr, status: { replicas: 2 } }, dgd(), ...Object.values(live)]);
    const result = await apply(reconcile(), context(kube));
    expect(result.fields).toMatchObject({ childReads: "all" });
    expect(kube.ops("apply")).toEqual([]);
  });

  it("skips what needs a foreign child, naming it: a foreign ServiceAccount keeps the RoleBinding, the Deployment and the Service back", async () => {
    const kube = new FakeKube([shownDpr, dgd(), foreign("ServiceAccount", "v1")]);
    const result = await apply(reconcile(), context(kube));
    expect(result.reply?.data).toMatchObject({
      applied: ["Role", "ConfigMap"],
      unchanged: [],
      skipped: [
        {
          kind: "ServiceAccount",
          reason: "ServiceAccount g1-pool-relay exists and is not controlled by this DynamoPoolRelay",
        },
        {
          kind: "RoleBinding",
          reason:
            "RoleBinding g1-pool-relay is not applied: it needs ServiceAccount g1-pool-relay, which is not controlled by this DynamoPoolRelay",
        },
        {
          kind: "Deployment",
          reason:
            "Deployment g1-pool-relay is not applied: it needs ServiceAccount g1-pool-relay, which is not controlled by this DynamoPoolRelay",
        },
        {
          kind: "Service",
          reason:
            "Service g1-pool-relay is not applied: it needs ServiceAccount g1-pool-relay, which is not controlled by this DynamoPoolRelay",
        },
      ],
    });
    expect(kube.ops("apply").map((c) => c.object.kind)).toEqual(["Role", "ConfigMap"]);
  });

  it("lists everything as unchanged, and writes no child, when the children carry the decision: only the status it has not shown", async () => {
    const kube = new FakeKube([shownDpr, dgd(), ...Object.values(current())]);
    const result = await apply(reconcile(), context(kube));
    expect(result.reply?.data).toMatchObject({
      applied: [],
      unchanged: ["ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Deployment", "Service"],
      skipped: [],
    });
    expect(kube.ops("replaceStatus").map((c) => c.object["status"])).toEqual([
      expect.objectContaining({ observedGeneration: 4 }),
    ]);
    expect(kube.stats.writes).toBe(1);
  });
});

describe("apply on a DynamoPoolRelay's change event, from the product's source", () => {
  /** The change event as the source sends it, carrying the object. */
  const change = (type: "add" | "update" | "delete", object: object): CloudEvent => ({
    specversion: "1.0",
    id: "c1",
    type: `dev.knative.apiserver.resource.${type}`,
    source: "https://10.96.0.1:443",
    time: NOW,
    datacontenttype: "application/json",
    extensions: { kind: "DynamoPoolRelay", name: "g1", namespace: "team-a" },
    data: object,
  });

  it("takes an unobserved generation as a request of cause DPRChanged: reads the pair and applies", async () => {
    const kube = new FakeKube([dpr, dgd()]);
    const result = await apply(change("add", dpr), context(kube));
    expect(result).toMatchObject({
      decision: "Applied",
      fields: { key: { namespace: "team-a", name: "g1", cause: "DPRChanged" } },
    });
    expect(result.reply).toMatchObject({
      type: EventType.Applied,
      data: { applied: ["ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Deployment", "Service"] },
    });
    expect(kinds(kube, "get").slice(0, 2)).toEqual(["DynamoPoolRelay", "DynamoGraphDeployment"]);
  });

  it.each([
    { name: "whose generation is observed", type: "update", object: { ...dpr, status: { observedGeneration: 4 } } },
    {
      name: "being deleted",
      type: "update",
      object: { ...dpr, metadata: { ...dpr.metadata, deletionTimestamp: NOW } },
    },
    { name: "deleted", type: "delete", object: dpr },
  ] as const)("answers one $name with nothing, unread", async ({ type, object }) => {
    const kube = new FakeKube([dpr, dgd()]);
    const result = await apply(change(type, object), context(kube));
    expect(result).toEqual({
      decision: "Observed",
      fields: { key: { namespace: "team-a", name: "g1", cause: "DPRChanged" }, from: "event" },
    });
    expect(kube.calls).toEqual([]);
  });

  it("refuses a DGD's change with 422, unread: eligibility takes those", async () => {
    const kube = new FakeKube([dpr, dgd()]);
    await expect(apply(change("add", dgd()), context(kube))).rejects.toMatchObject({ name: "BadEvent", status: 422 });
    expect(kube.calls).toEqual([]);
  });
});

describe("apply on a DynamoPoolRelay whose children and status carry the decision", () => {
  /** The world once the status function has shown what the current children make of the DynamoPoolRelay. */
  async function settled(): Promise<{ kube: FakeKube; live: Record<string, KubeObject> }> {
    const live = current();
    const kube = new FakeKube([dpr, dgd(), ...Object.values(live)]);
    const report = productEvent(
      EventType.Applied,
      { namespace: "team-a", name: "g1", uid: DPR_UID, generation: 4, applied: [], unchanged: [], skipped: [] },
      { source: "/test", cause: "s1", time: NOW },
    );
    await status(report, context(kube));
    const shown = kube.ops("replaceStatus").at(-1)?.object;
    expect(shown?.["status"]).toMatchObject({ observedGeneration: 4 });
    return { kube: new FakeKube([shown!, dgd(), ...Object.values(live)]), live };
  }

  it("replies nothing, after reading the children and their EndpointSlices once, and writes nothing (a periodic reconcile)", async () => {
    const { kube } = await settled();
    const result = await apply(reconcile("Resync"), context(kube));
    expect(result.decision).toBe("Converged");
    expect(result.reply).toBeUndefined();
    expect(kube.stats).toEqual({ reads: 9, writes: 0 });
    expect(kube.ops("list").map((c) => [c.kind, c.labelSelector])).toEqual([
      ["EndpointSlice", "kubernetes.io/service-name=g1-pool-relay"],
    ]);
  });

  it("answers a resync that finds a foreign child again, with its status shown already: applied nothing, skipped it, and reports it (looked up first)", async () => {
    const { kube } = await settled();
    kube.put(foreign("Service", "v1"));
    await apply(reconcile("Resync"), context(kube));
    kube.put(kube.ops("replaceStatus").at(-1)!.object);
    kube.calls.length = 0;
    const again = await apply(reconcile("Resync"), context(kube));
    expect(again.decision).toBe("Applied");
    expect(again.reply?.data).toMatchObject({ applied: [], skipped: [{ kind: "Service" }] });
    expect(again.fields?.["kubeEvents"]).toEqual([expect.objectContaining({ reason: "ForeignChild" })]);
    expect(kube.ops("replaceStatus")).toEqual([]);
    expect(kube.ops("apply")).toEqual([]);
  });

  it("shows itself what the status does not show yet (the Deployment's pods became Ready), writing no child", async () => {
    const { kube, live } = await settled();
    const deployment = live["Deployment"]!;
    kube.put({
      ...deployment,
      status: { ...(deployment["status"] as object), readyReplicas: 1, availableReplicas: 1 },
    });
    const result = await apply(reconcile("Resync"), context(kube));
    expect(result.reply?.type).toBe(EventType.Applied);
    expect(result.reply?.data).toMatchObject({
      applied: [],
      unchanged: ["ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Deployment", "Service"],
      statusWritten: true,
    });
    expect(kube.ops("replaceStatus").map((c) => c.object["status"])).toEqual([
      expect.objectContaining({ readyReplicas: 1 }),
    ]);
    expect(kube.stats.writes).toBe(1);
  });

  it("reports to status when the spec moved on (a generation the status has not observed), even with nothing to write", async () => {
    const { kube } = await settled();
    const shown = (await kube.get<KubeObject>({
      apiVersion: dpr.apiVersion,
      kind: dpr.kind,
      namespace: "team-a",
      name: "g1",
    }))!;
    kube.put({ ...shown, metadata: { ...shown.metadata, generation: 5 } });
    const result = await apply(reconcile(), context(kube));
    expect(result.reply?.type).toBe(EventType.Applied);
  });
});

describe("apply for a DGD change under a status that vouches for the children (a rollout)", () => {
  const rolledOut = { ...dgd(), status: { components: { w: { componentNames: ["g1-w-aaaa1111", "g1-w-bbbb2222"] } } } };
  /**
   * The settled world, its status shown by apply itself, with the DGD rolled out to two worker
   * namespaces: `children` as they are now (by default, as that status was shown from).
   */
  async function rollout(
    children = Object.values(current()),
  ): Promise<{ kube: FakeKube; before: Record<string, unknown> }> {
    const kube = new FakeKube([dpr, dgd(), ...Object.values(current())]);
    await apply(reconcile("Resync"), context(kube));
    const shown = kube.ops("replaceStatus")[0]!.object;
    expect(shown["status"]).toMatchObject({ observedGeneration: 4, connectionRevision: expect.any(String) as unknown });
    return {
      kube: new FakeKube([{ ...shown, metadata: { ...shown.metadata, resourceVersion: "8" } }, rolledOut, ...children]),
      before: shown["status"] as Record<string, unknown>,
    };
  }

  it("reads the DynamoPoolRelay and the DGD only, writes the ConfigMap over the version the status found it at, and shows the new sources itself", async () => {
    const { kube, before } = await rollout();
    const configMapVersion = current()["ConfigMap"]!.metadata.resourceVersion;
    expect(before["sourcesResourceVersion"]).toBe(configMapVersion);
    const result = await apply(reconcile("DGDChanged"), context(kube));
    expect(kinds(kube, "get")).toEqual(["DynamoPoolRelay", "DynamoGraphDeployment"]);
    expect(kube.ops("list")).toEqual([]);
    expect(kube.ops("apply").map((c) => [c.object.kind, c.options, c.object.metadata.resourceVersion])).toEqual([
      ["ConfigMap", { force: true }, configMapVersion],
    ]);
    expect(JSON.parse((kube.ops("apply")[0]!.object["data"] as Record<string, string>)["sources.json"]!)).toMatchObject(
      { sources: [{ namespace: "team-a-g1-aaaa1111" }, { namespace: "team-a-g1-bbbb2222" }] },
    );
    const [written] = kube.ops("replaceStatus");
    expect(written!.object.metadata.resourceVersion).toBe("8");
    const after = written!.object["status"] as Record<string, unknown>;
    expect(after["workerNamespaces"]).toEqual(["team-a-g1-aaaa1111", "team-a-g1-bbbb2222"]);
    expect(after["sourcesRevision"]).not.toBe(before["sourcesRevision"]);
    // The version the write made: the next rollout writes over it.
    expect(after["sourcesResourceVersion"]).toBe(kube.stored("ConfigMap")?.metadata.resourceVersion);
    expect(after["sourcesResourceVersion"]).not.toBe(configMapVersion);
    // Everything else is as the status the children were shown in.
    const { workerNamespaces: _w, sourcesRevision: _s, sourcesResourceVersion: _v, ...rest } = after;
    const { workerNamespaces: _bw, sourcesRevision: _bs, sourcesResourceVersion: _bv, ...restBefore } = before;
    expect(rest).toEqual(restBefore);
    expect(result.reply?.data).toMatchObject({
      applied: ["ConfigMap"],
      unchanged: ["ServiceAccount", "Role", "RoleBinding", "Deployment", "Service"],
      skipped: [],
      statusWritten: true,
    });
    expect(result.fields?.["childReads"]).toBe("none");
    expect(kube.stats).toEqual({ reads: 2, writes: 3 });
  });

  it("writes nothing for the same DGD again: the status says the ConfigMap carries it", async () => {
    const { kube } = await rollout();
    await apply(reconcile("DGDChanged"), context(kube));
    const result = await apply(reconcile("DGDChanged"), context(kube));
    expect(result).toEqual({
      decision: "Converged",
      fields: { key: expect.objectContaining({ name: "g1" }) as unknown, childReads: "none" },
    });
    expect(kube.stats).toEqual({ reads: 4, writes: 3 });
  });

  it.each([
    { cause: "Resync", generation: 4 },
    { cause: "Drift", generation: 4 },
    { cause: "DPRChanged", generation: 5 },
  ] as const)(
    "reads every child for a $cause request (generation $generation, the status observed 4)",
    async ({ cause, generation }) => {
      const { kube } = await rollout();
      const shown = kube.stored("DynamoPoolRelay")!;
      kube.put({ ...shown, metadata: { ...shown.metadata, generation } });
      const result = await apply(reconcile(cause), context(kube));
      expect(kinds(kube, "get")).toEqual([
        "DynamoPoolRelay",
        "DynamoGraphDeployment",
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "ConfigMap",
        "Deployment",
        "Service",
      ]);
      expect(kinds(kube, "list")).toEqual(["EndpointSlice"]);
      expect(result.reply?.data).toMatchObject({ applied: ["ConfigMap"], statusWritten: true });
      expect(result.fields?.["childReads"]).toBe("all");
    },
  );

  it("stops at the DynamoPoolRelay for a change of it whose generation is observed by now: a late or repeated request", async () => {
    const { kube } = await rollout();
    const result = await apply(reconcile("DPRChanged"), context(kube));
    expect(result).toEqual({
      decision: "Observed",
      fields: { key: expect.objectContaining({ name: "g1" }) as unknown },
    });
    expect(kinds(kube, "get")).toEqual(["DynamoPoolRelay"]);
    expect(kube.stats).toEqual({ reads: 1, writes: 0 });
  });

  it("runs on for a DynamoPoolRelay change observed as a spec the core rejects: only apply reports it as an Event", async () => {
    const invalid = {
      ...dpr,
      spec: { image: "relay:1" },
      status: {
        observedGeneration: 4,
        conditions: [{ type: "Ready", status: "False", reason: "InvalidSpec", message: "spec.clusterID: required" }],
      },
    };
    const kube = new FakeKube([invalid, dgd()]);
    const result = await apply(reconcile("DPRChanged"), context(kube));
    expect(result.decision).toBe("Rejected");
    expect(kinds(kube, "get").slice(0, 2)).toEqual(["DynamoPoolRelay", "DynamoGraphDeployment"]);
    expect(kube.ops("create").map((c) => c.object["reason"])).toEqual(["InvalidSpec"]);
  });

  it.each([
    { cause: "DGDChanged", reads: ["DynamoPoolRelay", "DynamoGraphDeployment"] },
    { cause: "DPRChanged", reads: ["DynamoPoolRelay"] },
  ] as const)(
    "ends a $cause request for a DynamoPoolRelay that is gone or going, writing nothing",
    async ({ cause, reads }) => {
      const going = { ...dpr, metadata: { ...dpr.metadata, deletionTimestamp: NOW } };
      for (const kube of [new FakeKube([dgd()]), new FakeKube([going, dgd()])]) {
        const result = await apply(reconcile(cause), context(kube));
        expect(result).toEqual({
          decision: "Gone",
          fields: { key: expect.objectContaining({ namespace: "team-a", name: "g1" }) as unknown },
        });
        expect(kinds(kube, "get")).toEqual(reads);
        expect(kube.stats.writes).toBe(0);
      }
    },
  );

  it("reads on for a DynamoPoolRelay change that shares its run with a DGD change", async () => {
    const { kube } = await rollout();
    // The first request's run starts at once (a rollout: no child read); the next two share the second run.
    const results = await Promise.all([
      apply(reconcile("DGDChanged"), context(kube)),
      apply(reconcile("DPRChanged"), context(kube)),
      apply(reconcile("DGDChanged"), context(kube)),
    ]);
    expect(kinds(kube, "get").filter((k) => k === "DynamoPoolRelay")).toHaveLength(2);
    expect(kinds(kube, "get").filter((k) => k === "Deployment")).toHaveLength(1);
    expect(results[1].decision).not.toBe("Observed");
  });

  it.each([
    { name: "drift last", shared: ["DGDChanged", "Drift"] as const },
    { name: "drift first", shared: ["Drift", "DGDChanged"] as const },
  ])(
    "reads every child for a run that also answers drift ($name): the causes of every request it answers count",
    async ({ shared }) => {
      const { kube } = await rollout();
      // The first request's run starts at once and reads no child; the next two wait for, and share, the second run.
      await Promise.all([
        apply(reconcile("DGDChanged"), context(kube)),
        ...shared.map((cause) => apply(reconcile(cause), context(kube))),
      ]);
      expect(kinds(kube, "get").filter((k) => k === "DynamoPoolRelay")).toHaveLength(2);
      expect(kinds(kube, "get").filter((k) => k === "ConfigMap")).toHaveLength(1);
      expect(kinds(kube, "get").filter((k) => k === "Deployment")).toHaveLength(1);
    },
  );

  const others = Object.values(current()).filter((c) => c.kind !== "ConfigMap");
  const changed = {
    ...current()["ConfigMap"]!,
    metadata: { ...current()["ConfigMap"]!.metadata, resourceVersion: "500" },
    data: { "sources.json": "{}" },
  };
  it.each([
    { name: "someone else's", children: [...others, foreign("ConfigMap", "v1")] },
    { name: "changed since", children: [...others, changed] },
  ])("reads every child when the ConfigMap is $name (409): the status's word is out of date", async ({ children }) => {
    const { kube } = await rollout(children);
    const result = await apply(reconcile("DGDChanged"), context(kube));
    expect(kinds(kube, "get").filter((k) => k !== "Event")).toEqual([
      "DynamoPoolRelay",
      "DynamoGraphDeployment",
      "ServiceAccount",
      "Role",
      "RoleBinding",
      "ConfigMap",
      "Deployment",
      "Service",
    ]);
    expect(kube.ops("apply")[0]!.object.metadata.resourceVersion).toBe(
      current()["ConfigMap"]!.metadata.resourceVersion,
    );
    expect(result.fields?.["childReads"]).toBe("all");
  });

  it("creates the ConfigMap again when it is gone: the API server's apply creates a missing object whatever version it names", async () => {
    const { kube } = await rollout(others);
    const result = await apply(reconcile("DGDChanged"), context(kube));
    expect(kinds(kube, "get")).toEqual(["DynamoPoolRelay", "DynamoGraphDeployment"]);
    expect(kube.stored("ConfigMap")).toMatchObject({
      metadata: { ownerReferences: [expect.objectContaining({ uid: DPR_UID, controller: true })] },
    });
    expect(result.reply?.data).toMatchObject({ applied: ["ConfigMap"], statusWritten: true });
  });

  it("fails the invocation on a transient error of its write (503): the redelivery decides again", async () => {
    const { kube } = await rollout();
    kube.failWith = (c) => (c.op === "apply" ? new ApiError(503, "ServiceUnavailable", "etcd is slow") : undefined);
    await expect(apply(reconcile("DGDChanged"), context(kube))).rejects.toThrow("etcd is slow");
    expect(kinds(kube, "get")).toEqual(["DynamoPoolRelay", "DynamoGraphDeployment"]);
  });
});

describe("apply's child writes, wave after wave", () => {
  const refusal = new ApiError(422, "Invalid", 'Role.rbac.authorization.k8s.io "g1-pool-relay" is invalid');
  const slow = new ApiError(503, "ServiceUnavailable", "etcd is slow");

  it("answers every write of a wave that has a refused one, sends no later wave, and reports the refusal (ApplyFailed)", async () => {
    const kube = new FakeKube([dpr, dgd()]);
    kube.failWith = (c) => (c.op === "apply" && c.object.kind === "Role" && !c.options.dryRun ? refusal : undefined);
    const result = await apply(reconcile(), context(kube));
    expect(result).toMatchObject({ decision: "ApplyFailed", fields: { error: refusal.message } });
    expect(kinds(kube, "apply")).toEqual(["Deployment", "ServiceAccount", "Role", "ConfigMap"]);
    expect(kube.stored("ConfigMap")).toBeDefined();
    expect(kube.stored("RoleBinding")).toBeUndefined();
    expect(kube.stored("Deployment")).toBeUndefined();
  });

  it.each([
    { name: "before it", refused: "ServiceAccount", failing: "ConfigMap" },
    { name: "after it", refused: "ConfigMap", failing: "ServiceAccount" },
  ])(
    "throws a wave's transient failure, not its refusal, with the refused write $name: the redelivery decides again",
    async ({ refused, failing }) => {
      const kube = new FakeKube([dpr, dgd()]);
      kube.failWith = (c) =>
        c.op !== "apply" || c.options.dryRun
          ? undefined
          : c.object.kind === refused
            ? refusal
            : c.object.kind === failing
              ? slow
              : undefined;
      await expect(apply(reconcile(), context(kube))).rejects.toThrow("etcd is slow");
      expect(kinds(kube, "apply")).toEqual(["Deployment", "ServiceAccount", "Role", "ConfigMap"]);
    },
  );
});

describe("the status apply shows itself", () => {
  it("is written after every child write, from what the writes returned, over the DynamoPoolRelay read before any child", async () => {
    const kube = new FakeKube([dpr, dgd()]);
    const result = await apply(reconcile(), context(kube));
    expect(result.reply?.data).toMatchObject({ statusWritten: true });
    const at = (op: string, kind?: string) =>
      kube.calls.flatMap((c, i) =>
        c.op === op && (!kind || ("ref" in c ? c.ref.kind : "object" in c ? c.object.kind : undefined) === kind)
          ? [i]
          : [],
      );
    const [written] = kube.ops("replaceStatus");
    expect(written!.object.metadata.resourceVersion).toBe("7");
    // The Service the write returned is the endpoint shown: it was absent when read.
    expect(written!.object["status"]).toMatchObject({
      serviceEndpoint: expect.stringMatching(/^g1-pool-relay\.team-a\.svc:\d+$/) as unknown,
    });
    expect(at("apply", "ServiceAccount").length).toBe(1);
    expect(kube.readBeforeDpr).toEqual(["DynamoGraphDeployment"]);
    expect(Math.max(...at("apply"))).toBeLessThan(at("replaceStatus")[0]!);
  });

  it.each([
    {
      name: "someone wrote the status since apply read it (409)",
      err: new ApiError(409, "Conflict", "the object has been modified"),
    },
    { name: "the API server is unavailable (503)", err: new ApiError(503, "ServiceUnavailable", "etcd is busy") },
    {
      name: "the DynamoPoolRelay went meanwhile (404)",
      err: new ApiError(404, "NotFound", "dynamopoolrelays g1 not found"),
    },
  ])(
    "is left to the status function when $name: the children stay written, the report brings a status run",
    async ({ err }) => {
      const kube = new FakeKube([dpr, dgd()]);
      kube.failWith = (c) => (c.op === "replaceStatus" ? err : undefined);
      const result = await apply(reconcile(), context(kube));
      expect(result.decision).toBe("Applied");
      expect(result.fields?.["statusShown"]).toBe(`left to status: ${err.message}`);
      expect(kube.ops("apply").filter((c) => !c.options.dryRun)).toHaveLength(6);
      expect(result.reply?.data).not.toHaveProperty("statusWritten");
      const shown = new FakeKube([dpr, dgd()]);
      expect((await status(result.reply!, context(shown))).decision).toBe("StatusWritten");
      expect(shown.stats.reads).toBe(9);
    },
  );

  it("fails the invocation when the API server refuses it (403): a missing permission is seen, not worked around", async () => {
    const kube = new FakeKube([dpr, dgd()]);
    kube.failWith = (c) =>
      c.op === "replaceStatus" ? new ApiError(403, "Forbidden", "dynamopoolrelays/status is forbidden") : undefined;
    await expect(apply(reconcile(), context(kube))).rejects.toThrow("dynamopoolrelays/status is forbidden");
  });

  it("is left to the status function when the status already looks right (it may have been written from children read before these writes)", async () => {
    const kube = new FakeKube([dpr, dgd(), ...Object.values(current())]);
    await apply(reconcile(), context(kube));
    const shown = kube.ops("replaceStatus")[0]!.object;
    const again = new FakeKube([shown, dgd(), ...Object.values(current())]);
    // Someone edited the Role, which the status shows nothing of.
    again.put({ ...current()["Role"]!, rules: [] });
    const result = await apply(reconcile("Resync"), context(again));
    expect(result.reply?.data).toMatchObject({ applied: ["Role"] });
    expect(again.ops("replaceStatus")).toEqual([]);
    expect(result.reply?.data).not.toHaveProperty("statusWritten");
    expect(result.fields?.["statusShown"]).toBe("left to status");
  });

  it("is not news to the status function: apply's report of it costs no request", async () => {
    const kube = new FakeKube([dpr, dgd()]);
    const result = await apply(reconcile(), context(kube));
    const after = new FakeKube([dpr, dgd()]);
    expect(await status(result.reply!, context(after))).toEqual({
      decision: "ShownByApply",
      fields: { key: { namespace: "team-a", name: "g1" } },
    });
    expect(after.calls).toEqual([]);
  });
});

describe("apply's withdrawn.v1 reply and the withdrawal's delete", () => {
  const withdrawnData = (service: string, reason = "DGDNotFound"): unknown =>
    expect.objectContaining({ namespace: "team-a", name: "g1", uid: DPR_UID, generation: 4, reason, service });

  it("deletes the Service it controls with the UID precondition of the Service it read: service deleted", async () => {
    const kube = new FakeKube([dpr, ownService("svc-uid-7")]);
    const result = await apply(reconcile(), context(kube));
    expect(result.reply?.type).toBe(EventType.Withdrawn);
    expect(result.reply?.data).toEqual(withdrawnData("deleted"));
    expect(kube.ops("deleteExact")).toEqual([{ op: "deleteExact", ref: SERVICE_REF, uid: "svc-uid-7" }]);
    expect(kube.ops("apply")).toEqual([]);
  });

  it("withdraws for an ineligible DGD as for a missing one, with the eligibility reason", async () => {
    const kube = new FakeKube([dpr, dgd({ "nvidia.com/dynamo-discovery-backend": "etcd" }), ownService("svc-uid-8")]);
    const result = await apply(reconcile(), context(kube));
    expect(result.reply?.data).toEqual(withdrawnData("deleted", "DiscoveryBackendNotKubernetes"));
    expect(kube.ops("deleteExact").map((c) => c.uid)).toEqual(["svc-uid-8"]);
  });

  it("answers absent when the Service went in between (the precondition's delete finds nothing)", async () => {
    const kube = new FakeKube([dpr, ownService("svc-uid-7")]);
    kube.deleteAnswer = "gone";
    const result = await apply(reconcile(), context(kube));
    expect(result.reply?.data).toEqual(withdrawnData("absent"));
    expect(kube.ops("deleteExact").map((c) => c.uid)).toEqual(["svc-uid-7"]);
  });

  it("answers absent, and deletes nothing, when there is no Service", async () => {
    const kube = new FakeKube([dpr]);
    const result = await apply(reconcile(), context(kube));
    expect(result.reply?.data).toEqual(withdrawnData("absent"));
    expect(kube.ops("deleteExact")).toEqual([]);
  });

  it.each([
    { name: "another controller", refs: [{ uid: "someone-else", controller: true }] },
    { name: "no owner at all", refs: [] },
    {
      name: "a reference to this DynamoPoolRelay that is not its controller",
      refs: [{ uid: DPR_UID, controller: false }],
    },
  ])("never deletes a foreign Service ($name): service notOwned", async ({ refs }) => {
    const kube = new FakeKube([dpr, ownService("svc-uid-9", refs)]);
    const result = await apply(reconcile(), context(kube));
    expect(result.reply?.data).toEqual(withdrawnData("notOwned"));
    expect(kube.ops("replaceStatus").map((c) => condition(c.object, "ServicePublished")?.reason)).toEqual([
      "ServiceNotOwned",
    ]);
    expect(kube.ops("deleteExact")).toEqual([]);
    expect(kube.stats.writes).toBe(1);
  });
});

const condition = (obj: KubeObject, type: string) =>
  (obj["status"] as { conditions?: { type: string; reason: string; status: string }[] }).conditions?.find(
    (c) => c.type === type,
  );

describe("the status of a withdrawal, shown by apply", () => {
  const readySlice: KubeObject = {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: "g1-pool-relay-abcde",
      namespace: "team-a",
      labels: { "kubernetes.io/service-name": "g1-pool-relay" },
    },
    endpoints: [{ conditions: { ready: true } }],
  };

  it("shows the Service withdrawn and nothing listening once it deleted the Service, though its EndpointSlices are still there", async () => {
    const kube = new FakeKube([dpr, ownService("svc-uid-7"), readySlice]);
    const result = await apply(reconcile(), context(kube));
    expect(kube.ops("deleteExact").map((c) => c.uid)).toEqual(["svc-uid-7"]);
    const [written] = kube.ops("replaceStatus");
    expect(written!.object.metadata.resourceVersion).toBe("7");
    expect([
      condition(written!.object, "ServicePublished")?.reason,
      condition(written!.object, "ListenerAvailable")?.status,
    ]).toEqual(["Withdrawn", "False"]);
    expect(result.reply?.data).toMatchObject({ service: "deleted", statusWritten: true });
    expect(kube.readBeforeDpr).toEqual(["DynamoGraphDeployment"]);
    // Nothing listens behind a Service it deleted: its EndpointSlices are not even listed.
    expect(kube.ops("list")).toEqual([]);
  });

  it("shows the Relay still listening while the Service is someone else's", async () => {
    const kube = new FakeKube([dpr, ownService("svc-uid-9", [{ uid: "someone-else", controller: true }]), readySlice]);
    await apply(reconcile(), context(kube));
    const [written] = kube.ops("replaceStatus");
    expect([
      condition(written!.object, "ServicePublished")?.reason,
      condition(written!.object, "ListenerAvailable")?.status,
    ]).toEqual(["ServiceNotOwned", "True"]);
  });

  it("is not news to the status function: the withdrawal's report costs no request", async () => {
    const result = await apply(reconcile(), context(new FakeKube([dpr])));
    const after = new FakeKube([dpr]);
    expect(await status(result.reply!, context(after))).toEqual({
      decision: "ShownByApply",
      fields: { key: { namespace: "team-a", name: "g1" } },
    });
    expect(after.calls).toEqual([]);
  });

  it("once shown, makes a reconcile of the withdrawn pair (a resync) reply nothing and write nothing", async () => {
    const kube = new FakeKube([dpr]);
    await apply(reconcile(), context(kube));
    const shown = kube.ops("replaceStatus")[0]!.object;
    const again = new FakeKube([shown]);
    const result = await apply(reconcile("Resync"), context(again));
    expect(result).toEqual({
      decision: "Converged",
      fields: { key: { namespace: "team-a", name: "g1", cause: "Resync" }, reason: "DGDNotFound", service: "absent" },
    });
    expect(again.stats).toEqual({ reads: 4, writes: 0 });
  });

  it("reports a Service it deleted even when the status already shows the withdrawal (a late apply put the Service back)", async () => {
    const kube = new FakeKube([dpr]);
    await apply(reconcile(), context(kube));
    const shown = kube.ops("replaceStatus")[0]!.object;
    expect(condition(shown, "ServicePublished")?.reason).toBe("Withdrawn");
    const again = new FakeKube([shown, ownService("svc-uid-3")]);
    const result = await apply(reconcile("Resync"), context(again));
    expect(again.ops("deleteExact").map((c) => c.uid)).toEqual(["svc-uid-3"]);
    expect(result.reply?.data).toMatchObject({ service: "deleted" });
    expect(again.ops("create").map((c) => c.object["reason"])).toEqual(["Withdrawn"]);
  });

  it("is left to the status function when its write conflicts (409): the report brings a status run", async () => {
    const kube = new FakeKube([dpr]);
    kube.failWith = (c) =>
      c.op === "replaceStatus" ? new ApiError(409, "Conflict", "the object has been modified") : undefined;
    const result = await apply(reconcile(), context(kube));
    expect(result.reply?.data).toMatchObject({ service: "absent" });
    expect(result.reply?.data).not.toHaveProperty("statusWritten");
    expect((await status(result.reply!, context(new FakeKube([dpr])))).decision).toBe("StatusWritten");
  });
});

describe("apply's requests for one key at once", () => {
  it("share runs: a third request arriving during the first is answered by the second's run, without a reply of its own", async () => {
    const kube = new FakeKube([dpr, dgd(), ...Object.values(current())]);
    const results = await Promise.all([
      apply(reconcile("Resync"), context(kube)),
      apply(reconcile("Resync"), context(kube)),
      apply(reconcile("Resync"), context(kube)),
    ]);
    // Two runs of two reads (DynamoPoolRelay, DGD), six children and the EndpointSlices each; the
    // second finds the status the first showed.
    expect(kube.ops("get").filter((c) => c.ref.kind === "DynamoPoolRelay")).toHaveLength(2);
    expect(kube.stats.reads).toBe(18);
    expect(results.map((r) => [r.decision, r.reply?.type, r.fields?.["coalesced"]])).toEqual([
      ["Applied", EventType.Applied, undefined],
      ["Converged", undefined, undefined],
      ["Converged", undefined, true],
    ]);
  });

  it("log each its own request: one answered by a run another's request started logs its own cause", async () => {
    const kube = new FakeKube([dpr, dgd(), ...Object.values(current())]);
    const results = await Promise.all([
      apply(reconcile("DGDChanged"), context(kube)),
      apply(reconcile("Resync"), context(kube)),
      apply(reconcile("Drift"), context(kube)),
    ]);
    expect(results.map((r) => [(r.fields?.["key"] as { cause: string }).cause, r.fields?.["coalesced"]])).toEqual([
      ["DGDChanged", undefined],
      ["Resync", undefined],
      ["Drift", true],
    ]);
  });

  it("run side by side for different keys", async () => {
    const other = { ...dpr, metadata: { ...dpr.metadata, namespace: "team-b", uid: "dpr-uid-2" } };
    const kube = new FakeKube([dpr, other]);
    const otherRequest = productEvent(
      EventType.Reconcile,
      { namespace: "team-b", name: "g1", cause: "DGDChanged" },
      { source: "/test", cause: "r2", time: NOW },
    );
    const results = await Promise.all([apply(reconcile(), context(kube)), apply(otherRequest, context(kube))]);
    expect(results.map((r) => r.fields?.["coalesced"])).toEqual([undefined, undefined]);
    expect(
      kube
        .ops("get")
        .filter((c) => c.ref.kind === "DynamoPoolRelay")
        .map((c) => c.ref.namespace),
    ).toEqual(["team-a", "team-b"]);
  });
});
