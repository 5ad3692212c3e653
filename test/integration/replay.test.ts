// Record and replay: a publish-then-rollout session recorded from the local router (one
// structured CloudEvent per line), replayed into fresh control planes, in order and shuffled,
// ends in the state of the original. Events are hints; every function re-reads the truth.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readEvents, replay } from "../../cli/replay.ts";
import { startControlPlane, type ControlPlane } from "../../dev/control-plane/index.ts";
import { startPipeline } from "../../dev/pipeline.ts";
import { toStructured } from "../../shared/cloudevent.ts";
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import { TEST_MANAGER, dgdObject, dprObject } from "./helpers.ts";
import { watchEvent } from "./pipeline-helpers.ts";

const NS = "replay";
const ROLLOUT = { components: { decode: { componentKind: "Deployment", componentNames: ["g1-decode-aaaa1111", "g1-decode-bbbb2222"] } } };
const dgdRef = { apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment", namespace: NS, name: "g1" };

async function withControlPlane<T>(fn: (cp: ControlPlane) => Promise<T>): Promise<T> {
  const cp = await startControlPlane({ profile: "api", ownerPid: process.pid });
  try {
    return await fn(cp);
  } finally {
    await cp.stop();
  }
}

async function objects(admin: KubeClient, rollout: boolean) {
  await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } }, TEST_MANAGER);
  await admin.apply(dprObject(NS, "g1"), TEST_MANAGER);
  const dgd = await admin.apply<KubeObject>(dgdObject(NS, "g1"), TEST_MANAGER);
  if (rollout) await admin.replaceStatus({ ...dgd, status: ROLLOUT });
}

/** What the session produced, without what differs between clusters (UIDs, versions, times, cluster IPs). */
async function state(admin: KubeClient) {
  const get = (apiVersion: string, kind: string, name = "g1-pool-relay") => admin.get<Record<string, any>>({ apiVersion, kind, namespace: NS, name });
  const dpr = (await get("nvidia.com/v1alpha1", "DynamoPoolRelay", "g1"))!;
  const { conditions, ...status } = dpr["status"];
  return {
    status: { ...status, conditions: conditions.map(({ lastTransitionTime: _t, ...c }: Record<string, unknown>) => c) },
    sources: (await get("v1", "ConfigMap"))?.["data"],
    template: (await get("apps/v1", "Deployment"))?.["spec"].template,
    service: (await get("v1", "Service"))?.["spec"].ports,
    role: (await get("rbac.authorization.k8s.io/v1", "Role"))?.["rules"],
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

describe("record and replay", () => {
  it("replays a recorded publish-then-rollout session into fresh control planes, in order and shuffled, to the same state", async () => {
    const dir = mkdtempSync(join(tmpdir(), "poolrelay-replay-"));
    const recording = join(dir, "events.jsonl");

    // 1. The original session, recorded as the router's tap records it.
    const original = await withControlPlane(async (cp) => {
      const lines: string[] = [];
      const pipeline = await startPipeline({ kubeconfig: cp.kubeconfig, impersonate: false, onEvent: (e) => lines.push(JSON.stringify(toStructured(e))) });
      try {
        await objects(cp.client, false);
        await pipeline.broker.publish(watchEvent("ADDED", (await cp.client.get<KubeObject>(dgdRef))!));
        const dgd = (await cp.client.get<KubeObject>(dgdRef))!;
        await cp.client.replaceStatus({ ...dgd, status: ROLLOUT });
        await pipeline.broker.publish(watchEvent("MODIFIED", (await cp.client.get<KubeObject>(dgdRef))!));
        await pipeline.broker.idle();
        writeFileSync(recording, `${lines.join("\n")}\n`);
        return await state(cp.client);
      } finally {
        await pipeline.stop();
      }
    });
    expect(original.sources["sources.json"]).toContain(`${NS}-g1-bbbb2222`);
    const events = readEvents(recording);
    expect(new Set(events.map((e) => e.type))).toEqual(new Set([
      "dev.knative.apiserver.resource.add", "dev.knative.apiserver.resource.update",
      "com.nvidia.dynamo.poolrelay.reconcile.v1", "com.nvidia.dynamo.poolrelay.applied.v1",
    ]));
    expect(readFileSync(recording, "utf8").trim().split("\n")).toHaveLength(events.length);

    // 2. Replays into fresh control planes holding the same objects, through the router's ingress.
    for (const [order, mode] of [[events, "binary"], [shuffled(events), "structured"]] as const) {
      const replayed = await withControlPlane(async (cp) => {
        const pipeline = await startPipeline({ kubeconfig: cp.kubeconfig, impersonate: false });
        try {
          await objects(cp.client, true);
          const result = await replay(order, { to: pipeline.sink, mode, rate: 0 }, () => {});
          expect(result).toEqual({ sent: events.length, failed: 0 });
          await pipeline.broker.idle();
          return await state(cp.client);
        } finally {
          await pipeline.stop();
        }
      });
      expect(replayed).toEqual(original);
    }
  });
});
