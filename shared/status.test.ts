import { describe, expect, it } from "vitest";
import { dgd, dpr } from "../test/builders.ts";
import { decide } from "./decide.ts";
import { DEFAULT_OPERATOR_DEFAULTS } from "./eligibility.ts";
import { ownership } from "./ownership.ts";
import { renderDeployment } from "./render/deployment.ts";
import { computeStatus, readyEndpoints, type Observed } from "./status.ts";

const UID = "11111111-2222-3333-4444-555555555555";
const NOW = "2026-02-01T00:00:00Z";
const ours = { metadata: { ownerReferences: [{ uid: UID, controller: true }] } };
const foreign = { metadata: { ownerReferences: [{ uid: "other", controller: true }] } };
const rolledOut = { metadata: { generation: 3 }, status: { observedGeneration: 3, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 } };
/** Mid-rollout: 3 pods, 1 of the new template (not yet available), the 2 old ones available. */
const rollingOnOldPods = { metadata: { generation: 4 }, status: { observedGeneration: 4, replicas: 3, updatedReplicas: 1, readyReplicas: 2, availableReplicas: 2 } };
const slices = (...ready: (boolean | undefined)[]) => [{ endpoints: ready.map((r) => ({ conditions: r === undefined ? {} : { ready: r } })) }];

function status(observed: Observed, options: { dgd?: ReturnType<typeof dgd> | undefined; previous?: Parameters<typeof computeStatus>[0]["previous"]; replicas?: number } = {}) {
  const d = dpr({ generation: 4, ...(options.replicas === undefined ? {} : { spec: { replicas: options.replicas } }) });
  const g = "dgd" in options ? options.dgd : dgd();
  return computeStatus({ dpr: d, decision: decide(d, g, DEFAULT_OPERATOR_DEFAULTS), observed, previous: options.previous, observedGeneration: 4, now: NOW, reflects: true, foreign: [] });
}
const cond = (s: ReturnType<typeof status>, type: string) => s.conditions?.find((c) => c.type === type);

describe("computeStatus", () => {
  const cases = [
    { name: "everything in place", observed: { deployment: rolledOut, service: ours, endpointSlices: slices(true, true) }, ready: "Ready", published: "Published", listener: "EndpointsReady" },
    { name: "no children yet", observed: { endpointSlices: [] }, ready: "ServiceNotPublished", published: "ServiceNotFound", listener: "NoReadyEndpoints" },
    { name: "a foreign Service", observed: { deployment: rolledOut, service: foreign, endpointSlices: slices(true) }, ready: "ServiceNotPublished", published: "ServiceNotOwned", listener: "EndpointsReady" },
    { name: "a Deployment that has not observed its generation", observed: { deployment: { ...rolledOut, metadata: { generation: 4 } }, service: ours, endpointSlices: slices(true) }, ready: "RolloutPending", published: "Published", listener: "EndpointsReady" },
    { name: "no available replica", observed: { deployment: { ...rolledOut, status: { ...rolledOut.status, availableReplicas: 0 } }, service: ours, endpointSlices: slices(false) }, ready: "RolloutPending", published: "Published", listener: "NoReadyEndpoints" },
    { name: "a rollout where only old pods are available", observed: { deployment: rollingOnOldPods, service: ours, endpointSlices: slices(true, true) }, ready: "RolloutPending", published: "Published", listener: "EndpointsReady" },
    { name: "no ready endpoint", observed: { deployment: rolledOut, service: ours, endpointSlices: slices(false, false) }, ready: "ListenerUnavailable", published: "Published", listener: "NoReadyEndpoints" },
  ];
  it.each(cases)("reports $name", ({ observed, ready, published, listener }) => {
    const s = status(observed);
    expect(cond(s, "Ready")).toMatchObject({ status: ready === "Ready" ? "True" : "False", reason: ready, observedGeneration: 4, lastTransitionTime: NOW });
    expect(cond(s, "Eligible")).toMatchObject({ status: "True", reason: "Eligible" });
    expect(cond(s, "ServicePublished")).toMatchObject({ status: published === "Published" ? "True" : "False", reason: published });
    expect(cond(s, "ListenerAvailable")).toMatchObject({ status: listener === "EndpointsReady" ? "True" : "False", reason: listener });
  });

  it("reports the endpoint, counts and revisions when published", () => {
    const s = status({ deployment: rolledOut, service: ours, endpointSlices: slices(true, true) });
    expect(s).toMatchObject({
      observedGeneration: 4,
      serviceEndpoint: "g1-pool-relay.team-a.svc:5561",
      replicas: 2,
      readyReplicas: 2,
      workerNamespaces: ["team-a-g1"],
    });
    expect(s.sourcesRevision).toMatch(/^[0-9a-f]{64}$/);
    expect(s.connectionRevision).toMatch(/^[0-9a-f]{64}$/);
    expect(cond(s, "ListenerAvailable")?.message).toBe("2 ready Relay endpoints behind the Service");
  });

  it.each([
    { name: "all desired pods Ready", observed: { deployment: rolledOut, service: ours, endpointSlices: slices(true, true) }, replicas: 2, expected: "2/2" },
    { name: "no Deployment yet", observed: { endpointSlices: [] }, replicas: 2, expected: "0/2" },
    { name: "a scale-up the Deployment has not caught up with (kubectl scale, an HPA)", observed: { deployment: rolledOut, service: ours, endpointSlices: slices(true, true) }, replicas: 3, expected: "2/3" },
    { name: "a rollout's surge pod (3 pods, 2 Ready)", observed: { deployment: rollingOnOldPods, service: ours, endpointSlices: slices(true, true) }, replicas: 2, expected: "2/2" },
    { name: "a scale to zero", observed: { deployment: { ...rolledOut, status: { ...rolledOut.status, replicas: 0, readyReplicas: 0, availableReplicas: 0 } }, service: ours, endpointSlices: [] }, replicas: 0, expected: "0/0" },
  ])("shows ready over desired (spec.replicas) for $name, as kubectl get deploy shows READY", ({ observed, replicas, expected }) => {
    expect(status(observed, { replicas }).readyOfDesired).toBe(expected);
  });

  it("shows ready over desired while withdrawn: the Deployment keeps running", () => {
    expect(status({ deployment: rolledOut, service: ours, endpointSlices: slices(true) }, { dgd: undefined, replicas: 3 }).readyOfDesired).toBe("2/3");
  });

  it("reports the selector the Relay Deployment selects its pods by, in the API server's form (sorted by key, as a Deployment's scale shows it)", () => {
    const s = status({ endpointSlices: [] });
    expect(s.labelSelector).toBe("app.kubernetes.io/instance=g1,app.kubernetes.io/name=dynamo-pool-relay");
    const d = dpr({ generation: 4 });
    const decision = decide(d, dgd(), DEFAULT_OPERATOR_DEFAULTS);
    if (decision.action !== "apply") throw new Error(`expected an apply decision, got ${decision.action}`);
    const deployment = renderDeployment(decision) as { spec: { selector: { matchLabels: Record<string, string> }; template: { metadata: { labels: Record<string, string> } } } };
    const required = Object.fromEntries(s.labelSelector!.split(",").map((r) => r.split("=") as [string, string]));
    expect(required).toEqual(deployment.spec.selector.matchLabels);
    expect(deployment.spec.template.metadata.labels).toMatchObject(required);
    // Withdrawn, the Deployment keeps running, so the selector still finds its pods.
    expect(status({ endpointSlices: [] }, { dgd: undefined }).labelSelector).toBe(s.labelSelector);
  });

  it("reports a withdrawal under way as still published, with the endpoint, until the Service is gone", () => {
    const s = status({ service: ours, endpointSlices: slices(true) }, { dgd: undefined });
    expect(cond(s, "ServicePublished")).toMatchObject({ status: "True", reason: "Withdrawing" });
    expect(cond(s, "ServicePublished")?.message).toMatch(/is still published; it is being withdrawn: /);
    expect(cond(s, "Ready")).toMatchObject({ status: "False", reason: "NotEligible" });
    expect(s.serviceEndpoint).toBe("g1-pool-relay.team-a.svc:5561");
  });

  it("reports a withdrawal with the eligibility reason and no endpoint", () => {
    const s = status({ endpointSlices: [] }, { dgd: undefined });
    expect(cond(s, "Ready")).toMatchObject({ status: "False", reason: "NotEligible" });
    expect(cond(s, "Eligible")).toMatchObject({ status: "False", reason: "DGDNotFound" });
    expect(cond(s, "ServicePublished")).toMatchObject({ status: "False", reason: "Withdrawn" });
    expect(s.serviceEndpoint).toBeUndefined();
    expect(s.workerNamespaces).toBeUndefined();
  });

  it("keeps the transition time of a condition whose status did not change", () => {
    const first = status({ endpointSlices: [] }, { dgd: undefined });
    const previous = { ...first, conditions: first.conditions!.map((c) => ({ ...c, lastTransitionTime: "2025-01-01T00:00:00Z" })) };
    const next = status({ deployment: rolledOut, service: ours, endpointSlices: slices(true) }, { previous });
    expect(cond(next, "Ready")?.lastTransitionTime).toBe(NOW);
    expect(cond(next, "ListenerAvailable")?.lastTransitionTime).toBe(NOW);
    const same = status({ endpointSlices: [] }, { dgd: undefined, previous });
    expect(same.conditions!.map((c) => c.lastTransitionTime)).toEqual(Array(4).fill("2025-01-01T00:00:00Z"));
  });

  it("on an invalid spec sets Ready=False InvalidSpec and keeps the rest of the previous status", () => {
    const bad = { ...dpr(), spec: { clusterID: "dc-1" } };
    const previous = status({ deployment: rolledOut, service: ours, endpointSlices: slices(true) });
    const s = computeStatus({ dpr: bad, decision: decide(bad, dgd(), DEFAULT_OPERATOR_DEFAULTS), observed: { endpointSlices: [] }, previous, observedGeneration: 4, now: NOW, reflects: true, foreign: [] });
    expect(cond(s, "Ready")).toMatchObject({ status: "False", reason: "InvalidSpec" });
    expect(cond(s, "Ready")?.message).toMatch(/spec\.image/);
    expect(s.serviceEndpoint).toBe(previous.serviceEndpoint);
    expect(previous.readyOfDesired).toBe("2/2");
    expect(s.readyOfDesired).toBe(previous.readyOfDesired);
    expect(cond(s, "ServicePublished")).toEqual(cond(previous, "ServicePublished"));
  });

  it("on an invalid spec still reports the selector, which the scale subresource needs, even with no previous status", () => {
    const bad = { ...dpr(), spec: { clusterID: "dc-1" } };
    const s = computeStatus({ dpr: bad, decision: decide(bad, dgd(), DEFAULT_OPERATOR_DEFAULTS), observed: { endpointSlices: [] }, previous: undefined, observedGeneration: 4, now: NOW, reflects: true, foreign: [] });
    expect(s.labelSelector).toBe("app.kubernetes.io/instance=g1,app.kubernetes.io/name=dynamo-pool-relay");
  });
});

describe("ownership", () => {
  it.each([
    { name: "no Service", svc: undefined, uid: UID, expected: "absent" },
    { name: "our controller reference", svc: ours, uid: UID, expected: "ours" },
    { name: "another controller", svc: foreign, uid: UID, expected: "foreign" },
    { name: "our UID but not as controller", svc: { metadata: { ownerReferences: [{ uid: UID }] } }, uid: UID, expected: "foreign" },
    { name: "no owner at all", svc: { metadata: {} }, uid: UID, expected: "foreign" },
    { name: "an owner without UID to compare (offline)", svc: ours, uid: undefined, expected: "foreign" },
  ])("says $expected for $name", ({ svc, uid, expected }) => {
    expect(ownership(svc, uid)).toBe(expected);
  });
});

describe("readyEndpoints", () => {
  it("counts ready and unset readiness, not ready=false", () => {
    expect(readyEndpoints([...slices(true, false, undefined), { endpoints: null }, {}])).toBe(2);
  });
});
