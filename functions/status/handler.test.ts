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
const config = parseConfig({});
const dpr = {
  apiVersion: "nvidia.com/v1alpha1",
  kind: "DynamoPoolRelay",
  metadata: { name: "g1", namespace: "team-a", uid: UID, generation: 1, resourceVersion: "7" },
  spec: { image: "relay:1", clusterID: "dc-1" },
};
const dgd = { apiVersion: config.dgdApiVersion, kind: "DynamoGraphDeployment", metadata: { name: "g1", namespace: "team-a" }, spec: { components: [{ name: "w", type: "worker" }] } };
const context = (kube: FakeKube): Context => ({ kube: kube.client, config, now: () => NOW, emit: async () => { throw new Error("status never emits"); } });

/** The DynamoPoolRelay, its DGD and the six children carrying the decision; the Deployment with `readyReplicas` Ready. */
function world(readyReplicas: number, omit: readonly string[] = []): { kube: FakeKube; deployment: KubeObject } {
  const decision = decide(dpr, dgd, config.defaults) as Extract<Decision, { action: "apply" }>;
  const live = liveChildren({
    dprUid: UID, clusterID: "dc-1", connectionRevision: decision.connectionRevision, sourcesText: decision.sources.text, appliedHash: appliedHashes(desiredChildren(decision)),
    deploymentStatus: { observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas, availableReplicas: readyReplicas },
  });
  const children = Object.entries(live).filter(([kind]) => !omit.includes(kind)).map(([, o]) => o as unknown as KubeObject);
  return { kube: new FakeKube([dpr, dgd, ...children]), deployment: live.Deployment as unknown as KubeObject };
}

let ids = 0;
/** A child event; its object only names the child unless given whole. */
const childEvent = (kind: string, type: "add" | "update" | "delete", object?: KubeObject): CloudEvent => ({
  specversion: "1.0", id: `e${++ids}`, source: "https://10.96.0.1:443", type: `dev.knative.apiserver.resource.${type}`, time: NOW,
  datacontenttype: "application/json", extensions: {},
  data: object ?? { apiVersion: "v1", kind, metadata: { name: "g1-pool-relay", namespace: "team-a", labels: LABELS } },
});
const applied = (): CloudEvent =>
  productEvent(EventType.Applied, { namespace: "team-a", name: "g1", uid: UID, generation: 1, applied: [], unchanged: [], skipped: [] }, { source: "/test", cause: `a${++ids}`, time: NOW });
const refused = (): CloudEvent =>
  productEvent(EventType.Rejected, { namespace: "team-a", name: "g1", uid: UID, generation: 1, reason: "ApplyFailed", message: "spec.replicas: Invalid value" }, { source: "/test", cause: `r${++ids}`, time: NOW });
const dprReads = (kube: FakeKube) => kube.ops("get").filter((c) => c.ref.kind === "DynamoPoolRelay").length;
const readyOf = (write: { object: KubeObject } | undefined) => (write?.object["status"] as { conditions?: { type: string; reason: string }[] } | undefined)?.conditions?.find((c) => c.type === "Ready");

describe("status under a burst", () => {
  it("answers three child changes at once with two runs: the third shares the second's, after the first", async () => {
    const { kube } = world(0);
    const results = await Promise.all([1, 2, 3].map(() => status(childEvent("Deployment", "update"), context(kube))));
    expect(dprReads(kube)).toBe(2);
    expect(results.map((r) => r.fields?.["coalesced"])).toEqual([undefined, undefined, true]);
    expect(results[2]!.reply).toBeUndefined();
    expect(results[2]!.decision).toBe(results[1]!.decision);
  });

  it("runs a report that arrives with child changes in their shared run, and shows its failure", async () => {
    const { kube } = world(0, ["Deployment"]);
    const results = await Promise.all([status(childEvent("ConfigMap", "update"), context(kube)), status(refused(), context(kube)), status(childEvent("ConfigMap", "update"), context(kube))]);
    expect(dprReads(kube)).toBe(2);
    expect(results.map((r) => r.fields?.["coalesced"])).toEqual([undefined, undefined, true]);
    const writes = kube.ops("replaceStatus");
    expect(writes).toHaveLength(2);
    expect(readyOf(writes[0])?.reason).toBe("Reconciling");
    expect(readyOf(writes[1])?.reason).toBe("ApplyFailed");
  });

  it("asks for a reconcile from a shared run when any of the changed children it answers is off the decision", async () => {
    const { kube, deployment } = world(0, ["Deployment"]);
    const [alone, ...shared] = await Promise.all([
      status(childEvent("EndpointSlice", "update"), context(kube)),
      status(childEvent("Deployment", "delete", deployment), context(kube)),
      status(childEvent("EndpointSlice", "update"), context(kube)),
    ]);
    expect(dprReads(kube)).toBe(2);
    expect(alone!.reply).toBeUndefined();
    expect(shared[0]!.reply).toMatchObject({ type: EventType.Reconcile, data: { namespace: "team-a", name: "g1", cause: "Drift" } });
    expect(shared[1]!.fields?.["coalesced"]).toBe(true);
  });
});

describe("a child event whose object is, in all status reads, what the last run here read", () => {
  const withStatus = (d: KubeObject, status: Record<string, unknown>, resourceVersion: string): KubeObject =>
    ({ ...d, metadata: { ...d.metadata, resourceVersion }, status: { ...(d["status"] as object), ...status } });

  it("costs no request, also when only the server's bookkeeping or the Deployment's conditions moved; a change status reads, or a delete, reads everything", async () => {
    const { kube, deployment } = world(1);
    await status(applied(), context(kube));
    const afterRun = kube.calls.length;
    expect(afterRun).toBeGreaterThan(0);
    const seen = await status(childEvent("Deployment", "update", deployment), context(kube));
    expect(seen).toMatchObject({ decision: "Seen", fields: { version: { kind: "Deployment", name: "g1-pool-relay" } } });
    const conditionsOnly = withStatus(deployment, { conditions: [{ type: "Progressing", status: "True", reason: "NewReplicaSetAvailable" }] }, "9001");
    expect((await status(childEvent("Deployment", "update", conditionsOnly), context(kube))).decision).toBe("Seen");
    expect(kube.calls).toHaveLength(afterRun);
    await status(childEvent("Deployment", "update", withStatus(deployment, { readyReplicas: 2 }, "9002")), context(kube));
    expect(dprReads(kube)).toBe(2);
    await status(childEvent("Deployment", "delete", deployment), context(kube));
    expect(dprReads(kube)).toBe(3);
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
