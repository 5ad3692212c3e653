import { describe, expect, it } from "vitest";
import type { CloudEvent } from "./cloudevent.ts";
import { deadLetterAsk } from "./dead-letter.ts";

const ev = (type: string, data: unknown, extensions: Record<string, string> = {}): CloudEvent => ({
  specversion: "1.0",
  id: "1",
  type,
  source: "s",
  extensions,
  data,
});
const obj = (kind: string, name: string, labels?: Record<string, string>) => ({
  apiVersion: "v1",
  kind,
  metadata: { namespace: "team-a", name, ...(labels ? { labels } : {}) },
});
const child = { "app.kubernetes.io/managed-by": "dynamo-pool-relay", "app.kubernetes.io/instance": "g1" };

describe("deadLetterAsk: the pair a dead-lettered event was about", () => {
  it.each([
    {
      name: "a reconcile request",
      event: ev("com.nvidia.dynamo.poolrelay.reconcile.v1", { namespace: "team-a", name: "g1", cause: "Drift" }),
      expected: { key: { namespace: "team-a", name: "g1" } },
    },
    {
      name: "a report from apply",
      event: ev("com.nvidia.dynamo.poolrelay.applied.v1", { namespace: "team-a", name: "g1", uid: "u", generation: 1 }),
      expected: { key: { namespace: "team-a", name: "g1" } },
    },
    {
      name: "a DGD change",
      event: ev("dev.knative.apiserver.resource.update", obj("DynamoGraphDeployment", "g1")),
      expected: { key: { namespace: "team-a", name: "g1" } },
    },
    {
      name: "a DynamoPoolRelay change",
      event: ev("dev.knative.apiserver.resource.add", obj("DynamoPoolRelay", "g1")),
      expected: { key: { namespace: "team-a", name: "g1" } },
    },
    {
      name: "a child's change, by its labels",
      event: ev("dev.knative.apiserver.resource.update", obj("EndpointSlice", "g1-pool-relay-x7f2k", child)),
      expected: { key: { namespace: "team-a", name: "g1" } },
    },
  ])("asks again for the pair of $name", ({ event, expected }) => {
    expect(deadLetterAsk(event)).toEqual(expected);
  });

  it.each([
    {
      name: "its own request, dead-lettered in turn",
      event: ev(
        "com.nvidia.dynamo.poolrelay.reconcile.v1",
        { namespace: "team-a", name: "g1", cause: "DeadLettered" },
        { deadletters: "1" },
      ),
      reason: "left to the requeue and the resync",
    },
    { name: "a resync tick", event: ev("dev.knative.sources.ping", { resync: true }), reason: "the next tick" },
    {
      name: "a product event without a key",
      event: ev("com.nvidia.dynamo.poolrelay.reconcile.v1", { name: "g1" }),
      reason: "names no DynamoPoolRelay",
    },
    {
      name: "a DGD no DynamoPoolRelay can pair with",
      event: ev("dev.knative.apiserver.resource.add", obj("DynamoGraphDeployment", "model.v1")),
      reason: "no DynamoPoolRelay can pair with",
    },
    {
      name: "an object of someone else's",
      event: ev("dev.knative.apiserver.resource.update", obj("Deployment", "web")),
      reason: "none of the product's children",
    },
    {
      name: "no object at all",
      event: ev("dev.knative.apiserver.resource.update", "text"),
      reason: "no Kubernetes object",
    },
    { name: "a type the product does not take", event: ev("com.example.other", {}), reason: "com.example.other" },
  ])("asks for nothing on $name, and says why", ({ event, reason }) => {
    const ask = deadLetterAsk(event);
    expect(ask).toHaveProperty("none");
    expect((ask as { none: string }).none).toContain(reason);
  });
});
