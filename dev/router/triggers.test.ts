// The Triggers in knative/triggers.yaml route each documented event type to exactly the function
// that handles it, and nothing else anywhere.
import { describe, expect, it } from "vitest";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { EventType } from "../../shared/events.ts";
import { apiServerEvent } from "./apiserver-events.ts";
import { LocalBroker } from "./broker.ts";
import { pingSource } from "./sources.ts";
import { routesFromTriggers } from "./triggers.ts";

const urls = { "poolrelay-eligibility": "http://e/", "poolrelay-apply": "http://a/", "poolrelay-status": "http://s/" };
const broker = new LocalBroker(routesFromTriggers(urls));
const watched = (type: "ADDED" | "MODIFIED" | "DELETED", apiVersion: string, kind: string) =>
  apiServerEvent(type, { apiVersion, kind, metadata: { name: "x", namespace: "n" } }, "https://10.96.0.1", "1", "2026-01-01T00:00:00Z");
const product = (type: string): CloudEvent => ({ specversion: "1.0", id: "1", type, source: "/dynamo-pool-relay/apply", extensions: {}, data: {} });

describe("Trigger routing", () => {
  it.each([
    { name: "DGD added", event: watched("ADDED", "nvidia.com/v1beta1", "DynamoGraphDeployment"), to: ["poolrelay-eligibility"] },
    { name: "DGD updated", event: watched("MODIFIED", "nvidia.com/v1beta1", "DynamoGraphDeployment"), to: ["poolrelay-eligibility"] },
    { name: "DGD deleted", event: watched("DELETED", "nvidia.com/v1beta1", "DynamoGraphDeployment"), to: ["poolrelay-eligibility"] },
    { name: "the resync tick", event: pingSource().event("2026-01-01T00:00:00Z"), to: ["poolrelay-eligibility"] },
    { name: "another PingSource's tick", event: { ...pingSource().event("2026-01-01T00:00:00Z"), source: "/apis/v1/namespaces/x/pingsources/other" }, to: [] },
    { name: "a reconcile request", event: product(EventType.Reconcile), to: ["poolrelay-apply"] },
    { name: "an applied report", event: product(EventType.Applied), to: ["poolrelay-status"] },
    { name: "a withdrawn report", event: product(EventType.Withdrawn), to: ["poolrelay-status"] },
    { name: "a rejected report", event: product(EventType.Rejected), to: ["poolrelay-status"] },
    { name: "a child Deployment change", event: watched("MODIFIED", "apps/v1", "Deployment"), to: ["poolrelay-status"] },
    { name: "a child Service deletion", event: watched("DELETED", "v1", "Service"), to: ["poolrelay-status"] },
    { name: "an EndpointSlice change", event: watched("MODIFIED", "discovery.k8s.io/v1", "EndpointSlice"), to: ["poolrelay-status"] },
    { name: "a Pod change (not watched)", event: watched("MODIFIED", "v1", "Pod"), to: [] },
    { name: "an unknown product type", event: product("com.nvidia.dynamo.poolrelay.other.v1"), to: [] },
  ])("sends $name to $to", ({ event, to }) => {
    expect(broker.matching(event).map((r) => r.trigger)).toEqual(to);
  });

  it("sets every Trigger's delivery in full: retries, backoff, timeout and a dead-letter sink", () => {
    for (const route of routesFromTriggers(urls)) {
      expect(route.delivery, route.trigger).toMatchObject({ retry: expect.any(Number), backoffPolicy: "exponential", backoffDelay: expect.stringMatching(/^PT/), timeout: expect.stringMatching(/^PT/) });
      expect(route.delivery.deadLetterSink, route.trigger).toBeDefined();
      expect(route.delivery.retry).toBeGreaterThan(0);
    }
  });
});
