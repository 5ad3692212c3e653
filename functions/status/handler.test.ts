// status shares runs among child changes for one key that arrive at once, and never among apply's
// reports, which each carry their own outcome. The adapter is an in-memory fake that records every call.
import { describe, expect, it } from "vitest";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { parseConfig } from "../../shared/config.ts";
import { EventType, productEvent } from "../../shared/events.ts";
import { FakeKube } from "../../test/unit/fake-kube.ts";
import { LABELS } from "../../test/live-children.ts";
import type { Context } from "../runtime/handler.ts";
import { status } from "./handler.ts";

const NOW = "2026-03-01T00:00:00Z";
const config = parseConfig({});
const dpr = {
  apiVersion: "nvidia.com/v1alpha1",
  kind: "DynamoPoolRelay",
  metadata: { name: "g1", namespace: "team-a", uid: "dpr-uid-1", generation: 1, resourceVersion: "7" },
  spec: { image: "relay:1", clusterID: "c" },
};
const context = (kube: FakeKube): Context => ({ kube: kube.client, config, now: () => NOW, emit: async () => { throw new Error("status never emits"); } });
let ids = 0;
const deploymentChanged = (): CloudEvent => ({
  specversion: "1.0", id: `e${++ids}`, source: "https://10.96.0.1:443", type: "dev.knative.apiserver.resource.update", time: NOW,
  datacontenttype: "application/json", extensions: {},
  data: { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "g1-pool-relay", namespace: "team-a", labels: LABELS } },
});
const applied = (): CloudEvent =>
  productEvent(EventType.Applied, { namespace: "team-a", name: "g1", uid: "dpr-uid-1", generation: 1, applied: [], unchanged: [], skipped: [] }, { source: "/test", cause: `a${++ids}`, time: NOW });
const dprReads = (kube: FakeKube) => kube.ops("get").filter((c) => c.ref.kind === "DynamoPoolRelay").length;

describe("status under a burst", () => {
  it("answers three child changes at once with two runs: the third shares the second's, after the first", async () => {
    const kube = new FakeKube([dpr]);
    const results = await Promise.all([1, 2, 3].map(() => status(deploymentChanged(), context(kube))));
    expect(dprReads(kube)).toBe(2);
    expect(results.map((r) => r.fields?.["coalesced"])).toEqual([undefined, undefined, true]);
    expect(results[2]!.reply).toBeUndefined();
    expect(results[2]!.decision).toBe(results[1]!.decision);
  });

  it("runs every apply report on its own", async () => {
    const kube = new FakeKube([dpr]);
    const results = await Promise.all([1, 2, 3].map(() => status(applied(), context(kube))));
    expect(dprReads(kube)).toBe(3);
    expect(results.map((r) => r.fields?.["coalesced"])).toEqual([undefined, undefined, undefined]);
  });
});
