import { describe, expect, it } from "vitest";
import { dgd, dpr } from "../test/builders.ts";
import { decide } from "./decide.ts";
import { DEFAULT_OPERATOR_DEFAULTS } from "./eligibility.ts";
import { renderDeployment } from "./render/deployment.ts";
import { computeStatus, readyEndpoints, type Observed, type StatusInput } from "./status.ts";

const UID = "11111111-2222-3333-4444-555555555555";
const NOW = "2026-02-01T00:00:00Z";
const ours = { metadata: { ownerReferences: [{ uid: UID, controller: true }] } };
const foreign = { metadata: { ownerReferences: [{ uid: "other", controller: true }] } };
const rolledOut = {
  metadata: { generation: 3 },
  status: { observedGeneration: 3, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 },
};
/** Mid-rollout: 3 pods, 1 of the new template (not yet available), the 2 old ones available. */
const rollingOnOldPods = {
  metadata: { generation: 4 },
  status: { observedGeneration: 4, replicas: 3, updatedReplicas: 1, readyReplicas: 2, availableReplicas: 2 },
};
const slices = (...ready: (boolean | undefined)[]) => [
  { endpoints: ready.map((r) => ({ conditions: r === undefined ? {} : { ready: r } })) },
];

function status(
  observed: Observed,
  options: {
    dgd?: ReturnType<typeof dgd> | undefined;
    previous?: Parameters<typeof computeStatus>[0]["previous"];
    replicas?: number;
  } = {},
) {
  const d = dpr({ generation: 4, ...(options.replicas === undefined ? {} : { spec: { replicas: options.replicas } }) });
  const g = "dgd" in options ? options.dgd : dgd();
  return computeStatus({
    dpr: d,
    decision: decide(d, g, DEFAULT_OPERATOR_DEFAULTS),
    observed,
    previous: options.previous,
    observedGeneration: 4,
    now: NOW,
    reflects: true,
    foreign: [],
  });
}
const cond = (s: ReturnType<typeof status>, type: string) => s.conditions?.find((c) => c.type === type);

describe("computeStatus", () => {
  const cases = [
    {
      name: "everything in place",
      observed: { deployment: rolledOut, service: ours, endpointSlices: slices(true, true) },
      ready: "Ready",
      published: "Published",
      listener: "EndpointsReady",
    },
    {
      name: "no children yet",
      observed: { endpointSlices: [] },
      ready: "ServiceNotPublished",
      published: "ServiceNotFound",
      listener: "NoReadyEndpoints",
    },
    {
      name: "a foreign Service",
      observed: { deployment: rolledOut, service: foreign, endpointSlices: slices(true) },
      ready: "ServiceNotPublished",
      published: "ServiceNotOwned",
      listener: "EndpointsReady",
    },
    {
      name: "a Deployment that has not observed its generation",
      observed: {
        deployment: { ...rolledOut, metadata: { generation: 4 } },
        service: ours,
        endpointSlices: slices(true),
      },
      ready: "RolloutPending",
      published: "Published",
      listener: "EndpointsReady",
    },
    {
      name: "no available replica",
      observed: {
        deployment: { ...rolledOut, status: { ...rolledOut.status, availableReplicas: 0 } },
        service: ours,
        endpointSlices: slices(false),
      },
      ready: "RolloutPending",
      published: "Published",
      listener: "NoReadyEndpoints",
    },
    {
      name: "a rollout where only old pods are available",
      observed: { deployment: rollingOnOldPods, service: ours, endpointSlices: slices(true, true) },
      ready: "RolloutPending",
      published: "Published",
      listener: "EndpointsReady",
    },
    {
      name: "no ready endpoint",
      observed: { deployment: rolledOut, service: ours, endpointSlices: slices(false, false) },
      ready: "ListenerUnavailable",
      published: "Published",
      listener: "NoReadyEndpoints",
    },
  ];
  it.each(cases)("reports $name", ({ observed, ready, published, listener }) => {
    const s = status(observed);
    expect(cond(s, "Ready")).toMatchObject({
      status: ready === "Ready" ? "True" : "False",
      reason: ready,
      observedGeneration: 4,
      lastTransitionTime: NOW,
    });
    expect(cond(s, "Eligible")).toMatchObject({ status: "True", reason: "Eligible" });
    expect(cond(s, "ServicePublished")).toMatchObject({
      status: published === "Published" ? "True" : "False",
      reason: published,
    });
    expect(cond(s, "ListenerAvailable")).toMatchObject({
      status: listener === "EndpointsReady" ? "True" : "False",
      reason: listener,
    });
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

  it("takes each count from the Deployment's own field, when its four counts all differ (a rollout under minReadySeconds)", () => {
    // 4 pods, 2 of the new template; 3 are Ready, only 1 has been Ready for minReadySeconds (available).
    const counting = {
      metadata: { generation: 4 },
      status: { observedGeneration: 4, replicas: 4, updatedReplicas: 2, readyReplicas: 3, availableReplicas: 1 },
    };
    const s = status(
      { deployment: counting, service: ours, endpointSlices: slices(true, true, true) },
      { replicas: 2 },
    );
    expect(s).toMatchObject({ replicas: 4, readyReplicas: 3, readyOfDesired: "3/2" });
  });

  it.each([
    {
      name: "all desired pods Ready",
      observed: { deployment: rolledOut, service: ours, endpointSlices: slices(true, true) },
      replicas: 2,
      expected: "2/2",
    },
    { name: "no Deployment yet", observed: { endpointSlices: [] }, replicas: 2, expected: "0/2" },
    {
      name: "a scale-up the Deployment has not caught up with (kubectl scale, an HPA)",
      observed: { deployment: rolledOut, service: ours, endpointSlices: slices(true, true) },
      replicas: 3,
      expected: "2/3",
    },
    {
      name: "a rollout's surge pod (3 pods, 2 Ready)",
      observed: { deployment: rollingOnOldPods, service: ours, endpointSlices: slices(true, true) },
      replicas: 2,
      expected: "2/2",
    },
    {
      name: "a scale to zero",
      observed: {
        deployment: {
          ...rolledOut,
          status: { ...rolledOut.status, replicas: 0, readyReplicas: 0, availableReplicas: 0 },
        },
        service: ours,
        endpointSlices: [],
      },
      replicas: 0,
      expected: "0/0",
    },
  ])(
    "shows ready over desired (spec.replicas) for $name, as kubectl get deploy shows READY",
    ({ observed, replicas, expected }) => {
      expect(status(observed, { replicas }).readyOfDesired).toBe(expected);
    },
  );

  it("shows ready over desired while withdrawn: the Deployment keeps running", () => {
    expect(
      status({ deployment: rolledOut, service: ours, endpointSlices: slices(true) }, { dgd: undefined, replicas: 3 })
        .readyOfDesired,
    ).toBe("2/3");
  });

  it("reports the selector the Relay Deployment selects its pods by, in the API server's form (sorted by key, as a Deployment's scale shows it)", () => {
    const s = status({ endpointSlices: [] });
    expect(s.labelSelector).toBe("app.kubernetes.io/instance=g1,app.kubernetes.io/name=dynamo-pool-relay");
    const d = dpr({ generation: 4 });
    const decision = decide(d, dgd(), DEFAULT_OPERATOR_DEFAULTS);
    if (decision.action !== "apply") throw new Error(`expected an apply decision, got ${decision.action}`);
    const deployment = renderDeployment(decision) as {
      spec: {
        selector: { matchLabels: Record<string, string> };
        template: { metadata: { labels: Record<string, string> } };
      };
    };
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
    const previous = {
      ...first,
      conditions: first.conditions!.map((c) => ({ ...c, lastTransitionTime: "2025-01-01T00:00:00Z" })),
    };
    const next = status({ deployment: rolledOut, service: ours, endpointSlices: slices(true) }, { previous });
    expect(cond(next, "Ready")?.lastTransitionTime).toBe(NOW);
    expect(cond(next, "ListenerAvailable")?.lastTransitionTime).toBe(NOW);
    const same = status({ endpointSlices: [] }, { dgd: undefined, previous });
    expect(same.conditions!.map((c) => c.lastTransitionTime)).toEqual(Array(4).fill("2025-01-01T00:00:00Z"));
  });

  it("on an invalid spec sets Ready=False InvalidSpec and keeps the rest of the previous status", () => {
    const bad = { ...dpr(), spec: { clusterID: "dc-1" } };
    const previous = status({ deployment: rolledOut, service: ours, endpointSlices: slices(true) });
    const s = computeStatus({
      dpr: bad,
      decision: decide(bad, dgd(), DEFAULT_OPERATOR_DEFAULTS),
      observed: { endpointSlices: [] },
      previous,
      observedGeneration: 4,
      now: NOW,
      reflects: true,
      foreign: [],
    });
    expect(cond(s, "Ready")).toMatchObject({ status: "False", reason: "InvalidSpec" });
    expect(cond(s, "Ready")?.message).toMatch(/spec\.image/);
    expect(s.serviceEndpoint).toBe(previous.serviceEndpoint);
    expect(previous.readyOfDesired).toBe("2/2");
    expect(s.readyOfDesired).toBe(previous.readyOfDesired);
    expect(cond(s, "ServicePublished")).toEqual(cond(previous, "ServicePublished"));
  });

  it("on an invalid spec still reports the selector, which the scale subresource needs, even with no previous status", () => {
    const bad = { ...dpr(), spec: { clusterID: "dc-1" } };
    const s = computeStatus({
      dpr: bad,
      decision: decide(bad, dgd(), DEFAULT_OPERATOR_DEFAULTS),
      observed: { endpointSlices: [] },
      previous: undefined,
      observedGeneration: 4,
      now: NOW,
      reflects: true,
      foreign: [],
    });
    expect(s.labelSelector).toBe("app.kubernetes.io/instance=g1,app.kubernetes.io/name=dynamo-pool-relay");
  });
});

const d4 = dpr({ generation: 4 });
const applyDecision = decide(d4, dgd(), DEFAULT_OPERATOR_DEFAULTS);
const withdrawDecision = decide(d4, undefined, DEFAULT_OPERATOR_DEFAULTS);
const NO_DGD = 'DynamoGraphDeployment "g1" does not exist in this namespace';
/** computeStatus for DynamoPoolRelay team-a/g1 at generation 4 whose DGD is eligible, the children carrying the decision, unless overridden. */
const compute = (over: Partial<StatusInput> = {}) =>
  computeStatus({
    dpr: d4,
    decision: applyDecision,
    observed: { endpointSlices: [] },
    previous: undefined,
    observedGeneration: 4,
    now: NOW,
    reflects: true,
    foreign: [],
    ...over,
  });
const messages = (s: ReturnType<typeof computeStatus>) =>
  Object.fromEntries(s.conditions!.map((c) => [c.type, `${c.reason}: ${c.message}`]));

describe("computeStatus, in the words a user reads (kubectl describe)", () => {
  const inPlace = { deployment: rolledOut, service: ours, endpointSlices: slices(true) };
  it.each<{ name: string; over: Partial<StatusInput>; expected: Record<string, string> }>([
    {
      name: "everything in place, one endpoint",
      over: { observed: inPlace },
      expected: {
        Ready: "Ready: the Relay listens at g1-pool-relay.team-a.svc:5561",
        Eligible: "Eligible: DynamoGraphDeployment team-a/g1 uses Kubernetes discovery in Pod mode",
        ServicePublished: "Published: Service g1-pool-relay is published",
        ListenerAvailable: "EndpointsReady: 1 ready Relay endpoint behind the Service",
      },
    },
    {
      name: "no children yet",
      over: {},
      expected: {
        Ready: "ServiceNotPublished: Service g1-pool-relay does not exist yet",
        Eligible: "Eligible: DynamoGraphDeployment team-a/g1 uses Kubernetes discovery in Pod mode",
        ServicePublished: "ServiceNotFound: Service g1-pool-relay does not exist yet",
        ListenerAvailable: "NoReadyEndpoints: no ready Relay endpoint behind the Service",
      },
    },
    {
      name: "a foreign Service",
      over: { observed: { ...inPlace, service: foreign } },
      expected: {
        Ready:
          "ServiceNotPublished: Service g1-pool-relay exists but is not controlled by this DynamoPoolRelay; it is left untouched",
        Eligible: "Eligible: DynamoGraphDeployment team-a/g1 uses Kubernetes discovery in Pod mode",
        ServicePublished:
          "ServiceNotOwned: Service g1-pool-relay exists but is not controlled by this DynamoPoolRelay; it is left untouched",
        ListenerAvailable: "EndpointsReady: 1 ready Relay endpoint behind the Service",
      },
    },
    {
      name: "a Deployment with no replica of its current template available",
      over: { observed: { ...inPlace, deployment: rollingOnOldPods } },
      expected: {
        Ready: "RolloutPending: no Relay replica of the current Deployment generation is available yet",
        Eligible: "Eligible: DynamoGraphDeployment team-a/g1 uses Kubernetes discovery in Pod mode",
        ServicePublished: "Published: Service g1-pool-relay is published",
        ListenerAvailable: "EndpointsReady: 1 ready Relay endpoint behind the Service",
      },
    },
    {
      name: "no ready endpoint",
      over: { observed: { ...inPlace, endpointSlices: slices(false) } },
      expected: {
        Ready: "ListenerUnavailable: no ready Relay endpoint behind the Service",
        Eligible: "Eligible: DynamoGraphDeployment team-a/g1 uses Kubernetes discovery in Pod mode",
        ServicePublished: "Published: Service g1-pool-relay is published",
        ListenerAvailable: "NoReadyEndpoints: no ready Relay endpoint behind the Service",
      },
    },
    {
      name: "children that do not carry the decision yet",
      over: { observed: inPlace, reflects: false },
      expected: {
        Ready: "Reconciling: the children do not carry the decision for generation 4 yet",
        Eligible: "Eligible: DynamoGraphDeployment team-a/g1 uses Kubernetes discovery in Pod mode",
        ServicePublished: "Published: Service g1-pool-relay is published",
        ListenerAvailable: "EndpointsReady: 1 ready Relay endpoint behind the Service",
      },
    },
    {
      name: "an apply the API server refused",
      over: {
        observed: inPlace,
        reflects: false,
        applyFailure: "the API server refused a child: spec.replicas: Invalid value",
      },
      expected: {
        Ready: "ApplyFailed: the API server refused a child: spec.replicas: Invalid value",
        Eligible: "Eligible: DynamoGraphDeployment team-a/g1 uses Kubernetes discovery in Pod mode",
        ServicePublished: "Published: Service g1-pool-relay is published",
        ListenerAvailable: "EndpointsReady: 1 ready Relay endpoint behind the Service",
      },
    },
    {
      name: "one foreign child",
      over: { observed: inPlace, foreign: ["ServiceAccount g1-pool-relay"] },
      expected: {
        Ready:
          "ForeignChild: ServiceAccount g1-pool-relay exists and is not controlled by this DynamoPoolRelay; nothing that needs it is applied (delete or rename it)",
        Eligible: "Eligible: DynamoGraphDeployment team-a/g1 uses Kubernetes discovery in Pod mode",
        ServicePublished: "Published: Service g1-pool-relay is published",
        ListenerAvailable: "EndpointsReady: 1 ready Relay endpoint behind the Service",
      },
    },
    {
      name: "two foreign children",
      over: { observed: inPlace, foreign: ["Role g1-pool-relay", "ConfigMap g1-pool-relay"] },
      expected: {
        Ready:
          "ForeignChild: Role g1-pool-relay, ConfigMap g1-pool-relay exist and are not controlled by this DynamoPoolRelay; nothing that needs them is applied (delete or rename them)",
        Eligible: "Eligible: DynamoGraphDeployment team-a/g1 uses Kubernetes discovery in Pod mode",
        ServicePublished: "Published: Service g1-pool-relay is published",
        ListenerAvailable: "EndpointsReady: 1 ready Relay endpoint behind the Service",
      },
    },
    {
      name: "a withdrawal under way",
      over: { decision: withdrawDecision, observed: inPlace, reflects: false },
      expected: {
        Ready: `NotEligible: ${NO_DGD}`,
        Eligible: `DGDNotFound: ${NO_DGD}`,
        ServicePublished: `Withdrawing: Service g1-pool-relay is still published; it is being withdrawn: ${NO_DGD}`,
        ListenerAvailable: "EndpointsReady: 1 ready Relay endpoint behind the Service",
      },
    },
    {
      name: "a withdrawal done",
      over: { decision: withdrawDecision, observed: { ...inPlace, service: undefined } },
      expected: {
        Ready: `NotEligible: ${NO_DGD}`,
        Eligible: `DGDNotFound: ${NO_DGD}`,
        ServicePublished: `Withdrawn: Service g1-pool-relay is withdrawn: ${NO_DGD}`,
        ListenerAvailable: "EndpointsReady: 1 ready Relay endpoint behind the Service",
      },
    },
  ])("says why for $name", ({ over, expected }) => {
    expect(messages(compute(over))).toEqual(expected);
  });

  it("names the DynamoPoolRelay of an object read without a namespace as in namespace default", () => {
    const bare = { metadata: { name: "g1", uid: UID, generation: 4 } };
    const s = compute({ dpr: bare, observed: { deployment: rolledOut, service: ours, endpointSlices: slices(true) } });
    expect(messages(s)).toMatchObject({
      Ready: "Ready: the Relay listens at g1-pool-relay.default.svc:5561",
      Eligible: "Eligible: DynamoGraphDeployment default/g1 uses Kubernetes discovery in Pod mode",
    });
    expect(s.serviceEndpoint).toBe("g1-pool-relay.default.svc:5561");
  });

  it("for an object without generation, waits for generation 1 and gives the conditions no observedGeneration", () => {
    const s = compute({
      dpr: { metadata: { name: "g1", namespace: "team-a", uid: UID } },
      reflects: false,
      observedGeneration: undefined,
    });
    expect(s.conditions![0]).toStrictEqual({
      type: "Ready",
      status: "False",
      lastTransitionTime: NOW,
      reason: "Reconciling",
      message: "the children do not carry the decision for generation 1 yet",
    });
  });

  it.each([
    { name: "a Deployment the controller has given no status yet", deployment: { metadata: { generation: 1 } } },
    {
      name: "a Deployment status that names no observed generation",
      deployment: { metadata: {}, status: { replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 } },
    },
    {
      name: "one available pod that is an old one (2 pods, 1 updated)",
      deployment: {
        metadata: { generation: 2 },
        status: { observedGeneration: 2, replicas: 2, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 },
      },
    },
  ])("waits for the rollout with $name", ({ deployment }) => {
    expect(
      cond(compute({ observed: { deployment, service: ours, endpointSlices: slices(true) } }), "Ready")?.reason,
    ).toBe("RolloutPending");
  });

  it("is Ready once one pod beyond the old ones is available, the controller having observed the generation", () => {
    const deployment = {
      metadata: { generation: 2 },
      status: { observedGeneration: 2, replicas: 2, updatedReplicas: 1, readyReplicas: 2, availableReplicas: 2 },
    };
    expect(
      cond(compute({ observed: { deployment, service: ours, endpointSlices: slices(true) } }), "Ready")?.reason,
    ).toBe("Ready");
  });

  it("writes the whole status of a withdrawal it may not yet claim: no observedGeneration, no endpoint, no sources", () => {
    expect(compute({ decision: withdrawDecision, observedGeneration: undefined, reflects: false })).toStrictEqual({
      conditions: [
        {
          type: "Ready",
          status: "False",
          observedGeneration: 4,
          lastTransitionTime: NOW,
          reason: "NotEligible",
          message: NO_DGD,
        },
        {
          type: "Eligible",
          status: "False",
          observedGeneration: 4,
          lastTransitionTime: NOW,
          reason: "DGDNotFound",
          message: NO_DGD,
        },
        {
          type: "ServicePublished",
          status: "False",
          observedGeneration: 4,
          lastTransitionTime: NOW,
          reason: "Withdrawn",
          message: `Service g1-pool-relay is withdrawn: ${NO_DGD}`,
        },
        {
          type: "ListenerAvailable",
          status: "False",
          observedGeneration: 4,
          lastTransitionTime: NOW,
          reason: "NoReadyEndpoints",
          message: "no ready Relay endpoint behind the Service",
        },
      ],
      replicas: 0,
      readyReplicas: 0,
      readyOfDesired: "0/2",
      labelSelector: "app.kubernetes.io/instance=g1,app.kubernetes.io/name=dynamo-pool-relay",
    });
  });

  it("while the children lag, keeps the worker namespaces and revisions the previous status reported, and reports none it never had", () => {
    const previous = {
      workerNamespaces: ["team-a-old"],
      sourcesRevision: "s".repeat(64),
      connectionRevision: "c".repeat(64),
    };
    expect(compute({ previous, reflects: false })).toMatchObject(previous);
    const fresh = compute({ reflects: false });
    expect(fresh.labelSelector).toBe("app.kubernetes.io/instance=g1,app.kubernetes.io/name=dynamo-pool-relay");
    expect(Object.keys(fresh)).not.toContain("workerNamespaces");
    expect(Object.keys(fresh)).not.toContain("sourcesRevision");
    expect(Object.keys(fresh)).not.toContain("connectionRevision");
  });

  it("on an invalid spec replaces the previous Ready condition, keeps the other conditions, and keeps the generation when none is given", () => {
    const bad = { ...dpr({ generation: 5 }), spec: { clusterID: "dc-1" } };
    const reject = decide(bad, dgd(), DEFAULT_OPERATOR_DEFAULTS);
    if (reject.action !== "reject") throw new Error(`expected a reject decision, got ${reject.action}`);
    const previous = compute({ observed: { deployment: rolledOut, service: ours, endpointSlices: slices(true) } });
    const s = compute({ dpr: bad, decision: reject, previous, observedGeneration: undefined });
    expect(s.observedGeneration).toBe(4);
    expect(s.conditions).toEqual([
      {
        type: "Ready",
        status: "False",
        observedGeneration: 5,
        lastTransitionTime: NOW,
        reason: "InvalidSpec",
        message: reject.message,
      },
      ...previous.conditions!.slice(1),
    ]);
    expect(s.conditions!.map((c) => c.type)).toEqual(["Ready", "Eligible", "ServicePublished", "ListenerAvailable"]);
  });
});

describe("readyEndpoints", () => {
  it("counts ready and unset readiness, not ready=false", () => {
    expect(readyEndpoints([...slices(true, false, undefined), { endpoints: null }, {}])).toBe(2);
  });
});
