import { describe, expect, it } from "vitest";
import { dgd, dgdV1alpha1 } from "../test/builders.ts";
import { DEFAULT_OPERATOR_DEFAULTS, dgdEligibility, eligibility } from "./eligibility.ts";

const BACKEND = "nvidia.com/dynamo-discovery-backend";
const MODE = "nvidia.com/dynamo-kube-discovery-mode";
const etcdDefault = { discoveryBackend: "etcd" } as const;

const cases = [
  { name: "a worker with no annotations under the default backend", input: dgd(), reason: undefined },
  {
    name: "a missing DGD",
    dgdName: "g1",
    input: undefined,
    reason: "DGDNotFound",
    message: /DynamoGraphDeployment "g1" does not exist/,
  },
  {
    name: "a DGD being deleted",
    input: dgd({ deleting: true }),
    reason: "DGDDeleting",
    message: 'DynamoGraphDeployment "g1" is being deleted',
  },
  {
    name: "a name with a dot",
    dgdName: "g.1",
    input: dgd({ name: "g.1" }),
    reason: "InvalidServiceName",
    message: /"g\.1-pool-relay"/,
  },
  { name: "a name starting with a digit", dgdName: "1g", input: dgd({ name: "1g" }), reason: "InvalidServiceName" },
  {
    name: "a 53-character name",
    dgdName: "a".repeat(53),
    input: dgd({ name: "a".repeat(53) }),
    reason: "InvalidServiceName",
    message: /at most 52 characters/,
  },
  { name: "a 52-character name", dgdName: "a".repeat(52), input: dgd({ name: "a".repeat(52) }), reason: undefined },
  {
    name: "etcd on the DGD",
    input: dgd({ annotations: { [BACKEND]: "etcd" } }),
    reason: "DiscoveryBackendNotKubernetes",
    message: /"decode" uses discovery backend "etcd" \(from the DynamoGraphDeployment's annotation/,
  },
  {
    name: "etcd on one worker component",
    input: dgd({
      components: [
        { name: "prefill", type: "prefill" },
        { name: "decode", type: "decode", annotations: { [BACKEND]: "etcd" } },
      ],
    }),
    reason: "DiscoveryBackendNotKubernetes",
    message: /"decode".*component "decode"'s annotation/,
  },
  {
    name: "etcd on a non-worker component only",
    input: dgd({
      components: [
        { name: "fe", type: "frontend", annotations: { [BACKEND]: "etcd" } },
        { name: "w", type: "worker" },
      ],
    }),
    reason: undefined,
  },
  {
    name: "the DGD annotation over the component's",
    input: dgd({
      annotations: { [BACKEND]: "kubernetes" },
      components: [{ name: "w", type: "worker", annotations: { [BACKEND]: "etcd" } }],
    }),
    reason: undefined,
  },
  {
    name: "the component annotation over the operator default",
    defaults: etcdDefault,
    input: dgd({ components: [{ name: "w", type: "worker", annotations: { [BACKEND]: "kubernetes" } }] }),
    reason: undefined,
  },
  {
    name: "an etcd operator default",
    defaults: etcdDefault,
    input: dgd(),
    reason: "DiscoveryBackendNotKubernetes",
    message:
      'worker component "decode" uses discovery backend "etcd" (from the operator\'s default backend); the Relay needs Kubernetes discovery',
  },
  {
    name: "an unknown backend",
    input: dgd({ annotations: { [BACKEND]: "consul" } }),
    reason: "UnknownDiscoveryBackend",
    message: /"consul".*expected one of kubernetes, etcd/,
  },
  {
    name: "container mode on the DGD",
    input: dgd({ annotations: { [MODE]: "container" } }),
    reason: "DiscoveryModeNotPod",
    message: `worker component "decode" uses Kubernetes discovery mode "container" (from the DynamoGraphDeployment's annotation ${MODE}); the Relay needs Pod mode`,
  },
  {
    name: "container mode on a worker",
    input: dgd({ components: [{ name: "w", type: "worker", annotations: { [MODE]: "container" } }] }),
    reason: "DiscoveryModeNotPod",
    message: `worker component "w" uses Kubernetes discovery mode "container" (from component "w"'s annotation ${MODE}); the Relay needs Pod mode`,
  },
  {
    name: "container mode on the DGD over pod mode on a worker",
    input: dgd({
      annotations: { [MODE]: "container" },
      components: [{ name: "w", type: "worker", annotations: { [MODE]: "pod" } }],
    }),
    reason: "DiscoveryModeNotPod",
  },
  {
    name: "pod mode on the DGD over container mode on a worker",
    input: dgd({
      annotations: { [MODE]: "pod" },
      components: [{ name: "w", type: "worker", annotations: { [MODE]: "container" } }],
    }),
    reason: undefined,
  },
  {
    name: "an unknown mode",
    input: dgd({ annotations: { [MODE]: "Pod" } }),
    reason: "UnknownDiscoveryMode",
    message: `worker component "decode" has Kubernetes discovery mode "Pod" from the DynamoGraphDeployment's annotation ${MODE}; expected one of pod, container`,
  },
  {
    name: "explicit pod mode",
    input: dgd({ annotations: { [MODE]: "pod", [BACKEND]: "kubernetes" } }),
    reason: undefined,
  },
  {
    name: "no worker components, judged by the DGD's annotations",
    input: dgd({ components: [{ name: "fe", type: "frontend" }], annotations: { [BACKEND]: "etcd" } }),
    reason: "DiscoveryBackendNotKubernetes",
    message: /the DynamoGraphDeployment uses/,
  },
  {
    name: "the v1alpha1 shape with a container-mode worker",
    input: dgdV1alpha1({ components: [{ name: "w", type: "worker", annotations: { [MODE]: "container" } }] }),
    reason: "DiscoveryModeNotPod",
  },
];

describe("eligibility", () => {
  it.each(cases)("judges $name", ({ dgdName, input, defaults, reason, message }) => {
    const verdict = eligibility(dgdName ?? "g1", input, defaults ?? DEFAULT_OPERATOR_DEFAULTS);
    if (reason === undefined) {
      expect(verdict).toEqual({ eligible: true });
      return;
    }
    expect(verdict.eligible).toBe(false);
    expect(!verdict.eligible && verdict.reason).toBe(reason);
    if (typeof message === "string") expect(!verdict.eligible && verdict.message).toBe(message);
    else if (message) expect(!verdict.eligible && verdict.message).toMatch(message);
  });
});

describe("dgdEligibility", () => {
  it("judges a DGD a selector picks whatever its name: the Relay's Service is named after its DynamoPoolRelay", () => {
    const dotted = dgd({ name: "g.1" });
    expect(eligibility("g.1", dotted, DEFAULT_OPERATOR_DEFAULTS)).toMatchObject({ reason: "InvalidServiceName" });
    expect(dgdEligibility("g.1", dotted, DEFAULT_OPERATOR_DEFAULTS)).toEqual({ eligible: true });
    expect(dgdEligibility("g.1", dgd({ name: "g.1", deleting: true }), DEFAULT_OPERATOR_DEFAULTS)).toMatchObject({
      eligible: false,
      reason: "DGDDeleting",
    });
  });
});
