// The Relay Deployment field by field, against what docs/design.md ("The rules, in plain words") and
// docs/api.md promise. Every expected value is written out here: none is read back from the
// renderer or the constants it is built from, so a changed port, probe, label or default fails.
import { describe, expect, it } from "vitest";
import { dgd } from "../../test/builders.ts";
import { DISCOVERY, LABELS, SELECTOR } from "../../test/live-children.ts";
import { decide, type DecisionSettings } from "../decide.ts";
import { DEFAULT_OPERATOR_DEFAULTS } from "../eligibility.ts";
import { renderDeployment } from "./deployment.ts";

const UID = "11111111-2222-3333-4444-555555555555";
/**
 * The connection revision of cluster ID dc-1, image relay:1, env A=1 and the default command, as
 * computed by the code before the command was configurable (the vector in
 * shared/connection-revision.test.ts), not by this code.
 */
const REVISION = "9a0830caf7e97b37ad127cede1aa4f49b170c4ae427dadf5a728957a0c40f920";

/** A DynamoPoolRelay as a user writes it: only what the case is about, no defaults filled in. */
function rawDpr(spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) {
  return {
    apiVersion: "nvidia.com/v1alpha1",
    kind: "DynamoPoolRelay",
    metadata: { name: "g1", namespace: "team-a", uid: UID, generation: 1, ...metadata },
    spec: { image: "relay:1", clusterID: "dc-1", env: [{ name: "A", value: "1" }], ...spec },
  };
}

function deployment(
  spec: Record<string, unknown> = {},
  settings: DecisionSettings = DEFAULT_OPERATOR_DEFAULTS,
  metadata: Record<string, unknown> = {},
) {
  const decision = decide(
    rawDpr(spec, metadata),
    dgd({
      name: (metadata["name"] as string | undefined) ?? "g1",
      namespace: (metadata["namespace"] as string | undefined) ?? "team-a",
    }),
    settings,
  );
  if (decision.action !== "apply") throw new Error(`expected an apply decision, got ${JSON.stringify(decision)}`);
  return renderDeployment(decision);
}
const podSpec = (spec: Record<string, unknown> = {}) => deployment(spec).spec.template.spec;
const container = (spec: Record<string, unknown> = {}) => {
  const containers = podSpec(spec).containers;
  expect(containers).toHaveLength(1);
  return containers[0]!;
};

describe("the Relay Deployment's identity", () => {
  it("is apps/v1 Deployment <dgd>-pool-relay in the DynamoPoolRelay's namespace, with the product labels, Knative's SinkBinding opt-out and a controller reference", () => {
    const d = deployment();
    expect(d.apiVersion).toBe("apps/v1");
    expect(d.kind).toBe("Deployment");
    expect(d.metadata).toEqual({
      name: "g1-pool-relay",
      namespace: "team-a",
      labels: { ...LABELS, "bindings.knative.dev/exclude": "true" },
      ownerReferences: [
        {
          apiVersion: "nvidia.com/v1alpha1",
          kind: "DynamoPoolRelay",
          name: "g1",
          uid: UID,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    });
  });

  it("goes in the namespace default, and names its runtime namespace after it, when the DynamoPoolRelay has none (an offline render)", () => {
    const d = deployment({}, DEFAULT_OPERATOR_DEFAULTS, { namespace: undefined });
    expect(d.metadata.namespace).toBe("default");
    expect(d.spec.template.spec.containers[0]!.env).toContainEqual({
      name: "DYN_NAMESPACE",
      value: "pool-relay-default-g1",
    });
  });

  it("carries no ownerReference when the DynamoPoolRelay has no UID to point at (an offline render)", () => {
    const d = deployment({}, DEFAULT_OPERATOR_DEFAULTS, { uid: undefined });
    expect(d.metadata).toEqual({
      name: "g1-pool-relay",
      namespace: "team-a",
      labels: { ...LABELS, "bindings.knative.dev/exclude": "true" },
    });
  });

  it("selects its pods by name and instance only (a Deployment's selector can never change), and labels them for Kubernetes discovery", () => {
    const d = deployment();
    expect(d.spec.selector).toEqual({ matchLabels: SELECTOR });
    expect(d.spec.template.metadata).toEqual({
      labels: { ...LABELS, ...DISCOVERY },
    });
  });

  it("runs the pods as the ServiceAccount <dgd>-pool-relay, without Service links, with 60 s to stop", () => {
    const spec = podSpec();
    expect(spec.serviceAccountName).toBe("g1-pool-relay");
    expect(spec.enableServiceLinks).toBe(false);
    expect(spec.terminationGracePeriodSeconds).toBe(60);
  });
});

describe("replicas", () => {
  it("defaults to 2 when spec.replicas is omitted, whatever the DGD's own replica counts", () => {
    const raw = rawDpr();
    expect(raw.spec).not.toHaveProperty("replicas");
    expect(deployment().spec.replicas).toBe(2);
  });

  it.each([1, 5, 0])("takes an explicit spec.replicas of %i as it is (0 scales the Relay to zero)", (replicas) => {
    expect(deployment({ replicas }).spec.replicas).toBe(replicas);
  });
});

describe("rollouts", () => {
  it("bring a new pod up before an old one goes (maxSurge 1, maxUnavailable 0), keeping 3 old ReplicaSets", () => {
    const d = deployment();
    expect(d.spec.strategy).toEqual({ type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
    expect(d.spec.revisionHistoryLimit).toBe(3);
  });
});

describe("the Relay container", () => {
  it("is the one container, named relay, running spec.image with Kubernetes' default pull policy unless one is given", () => {
    expect(container()).toMatchObject({ name: "relay", image: "relay:1" });
    expect(container()).not.toHaveProperty("imagePullPolicy");
    expect(container({ imagePullPolicy: "Always" }).imagePullPolicy).toBe("Always");
  });

  it("runs python3 -m dynamo.kv_dc_relay by default, in file mode on 0.0.0.0:5561", () => {
    const c = container();
    expect(c.command).toEqual(["python3", "-m", "dynamo.kv_dc_relay"]);
    expect(c.args).toEqual(["--bind", "0.0.0.0:5561", "--sources-file", "/etc/pool-relay/sources.json"]);
  });

  it("runs the operator's RELAY_COMMAND instead when one is configured, with the same arguments", () => {
    const c = deployment({}, { ...DEFAULT_OPERATOR_DEFAULTS, relayCommand: ["dynamo-pool-relay", "--log-json"] }).spec
      .template.spec.containers[0]!;
    expect(c.command).toEqual(["dynamo-pool-relay", "--log-json"]);
    expect(c.args).toEqual(["--bind", "0.0.0.0:5561", "--sources-file", "/etc/pool-relay/sources.json"]);
  });

  it("exposes gRPC on 5561 and the system port on 8081", () => {
    expect(container().ports).toEqual([
      { name: "grpc", containerPort: 5561, protocol: "TCP" },
      { name: "system", containerPort: 8081, protocol: "TCP" },
    ]);
  });

  it("probes the gRPC listener: startup and readiness ask for the KvEventRelay service, liveness for the server", () => {
    const c = container();
    // Startup allows 5 s x 60 = 5 minutes for a Relay to begin listening before liveness applies.
    expect(c.startupProbe).toEqual({
      grpc: { port: 5561, service: "dynamo.kvrelay.v1.KvEventRelay" },
      periodSeconds: 5,
      failureThreshold: 60,
    });
    expect(c.readinessProbe).toEqual({
      grpc: { port: 5561, service: "dynamo.kvrelay.v1.KvEventRelay" },
      periodSeconds: 10,
    });
    expect(c.livenessProbe).toEqual({ grpc: { port: 5561 }, periodSeconds: 20, failureThreshold: 3 });
  });

  it("mounts the sources ConfigMap read-only as the directory /etc/pool-relay (no subPath, so updates reach running pods)", () => {
    expect(container().volumeMounts).toEqual([{ name: "sources", mountPath: "/etc/pool-relay", readOnly: true }]);
    expect(podSpec().volumes).toEqual([{ name: "sources", configMap: { name: "g1-pool-relay" } }]);
  });
});

describe("the Relay's environment", () => {
  const fieldRef = (name: string, fieldPath: string) => ({
    name,
    valueFrom: { fieldRef: { apiVersion: "v1", fieldPath } },
  });

  it("is the cluster ID, the connection revision, Pod-mode Kubernetes discovery, its own runtime namespace, the system port and the Downward API, then spec.env in order", () => {
    const env = container({
      env: [
        { name: "A", value: "1" },
        { name: "HF_TOKEN", valueFrom: { secretKeyRef: { name: "hf", key: "token" } } },
        { name: "ME", value: "$(POD_NAME)" },
      ],
    }).env;
    expect(env).toEqual([
      { name: "DYN_DC_ID", value: "dc-1" },
      { name: "DYN_RELAY_CONNECTION_REVISION", value: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown },
      { name: "DYN_DISCOVERY_BACKEND", value: "kubernetes" },
      { name: "DYN_KUBE_DISCOVERY_MODE", value: "pod" },
      { name: "DYN_NAMESPACE", value: "pool-relay-team-a-g1" },
      { name: "DYN_SYSTEM_PORT", value: "8081" },
      fieldRef("POD_NAME", "metadata.name"),
      fieldRef("POD_NAMESPACE", "metadata.namespace"),
      fieldRef("POD_UID", "metadata.uid"),
      { name: "A", value: "1" },
      { name: "HF_TOKEN", valueFrom: { secretKeyRef: { name: "hf", key: "token" } } },
      { name: "ME", value: "$(POD_NAME)" },
    ]);
  });

  it("carries the connection revision into the pod template, and nothing else that would roll the pods (no annotations)", () => {
    const d = deployment();
    expect(d.spec.template.spec.containers[0]!.env).toContainEqual({
      name: "DYN_RELAY_CONNECTION_REVISION",
      value: REVISION,
    });
    expect(d.spec.template.metadata).not.toHaveProperty("annotations");
  });

  it("names a runtime namespace outside the <namespace>-<dgd> prefix frontends look for workers under", () => {
    const env = deployment({}, DEFAULT_OPERATOR_DEFAULTS, { name: "llama", namespace: "inference" }).spec.template.spec
      .containers[0]!.env;
    expect(env).toContainEqual({ name: "DYN_NAMESPACE", value: "pool-relay-inference-llama" });
  });

  it.each(["DYN_DC_ID", "DYN_NAMESPACE", "DYN_RELAY_BIND", "POD_UID"])(
    "never renders a spec.env that sets %s, which the product sets: the spec is rejected",
    (name) => {
      const decision = decide(rawDpr({ env: [{ name, value: "x" }] }), dgd(), DEFAULT_OPERATOR_DEFAULTS);
      expect(decision).toEqual({
        action: "reject",
        reason: "InvalidSpec",
        message: `DynamoPoolRelay team-a/g1 is invalid: spec.env[0]: the product sets ${name} itself; remove it from spec.env`,
      });
    },
  );
});

describe("resources", () => {
  it("requests cpu 1 and memory 1Gi and limits memory to 4Gi when spec.resources is omitted, as the Relay's deployment guide does", () => {
    expect(container().resources).toEqual({ requests: { cpu: "1", memory: "1Gi" }, limits: { memory: "4Gi" } });
  });

  it("takes spec.resources whole, not merged with the defaults", () => {
    expect(container({ resources: { requests: { cpu: "2" } } }).resources).toEqual({ requests: { cpu: "2" } });
    expect(container({ resources: { limits: { cpu: "4", memory: "8Gi" } } }).resources).toEqual({
      limits: { cpu: "4", memory: "8Gi" },
    });
  });
});

describe("security", () => {
  it("runs the pod under the restricted profile: non-root uid and gid 1000, RuntimeDefault seccomp", () => {
    expect(podSpec().securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      seccompProfile: { type: "RuntimeDefault" },
    });
  });

  it("runs the container without privilege escalation and with every capability dropped", () => {
    expect(container().securityContext).toEqual({ allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } });
  });
});

describe("placement and pulling", () => {
  it("spreads the pods across nodes by default: a preferred anti-affinity to its own pods per hostname", () => {
    expect(podSpec().affinity).toEqual({
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 100,
            podAffinityTerm: { topologyKey: "kubernetes.io/hostname", labelSelector: { matchLabels: SELECTOR } },
          },
        ],
      },
    });
  });

  it("takes spec.affinity instead of the default, whole: nothing of the default anti-affinity is merged in", () => {
    const nodeAffinity = {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: "pool", operator: "In", values: ["cpu"] }] }],
      },
    };
    expect(podSpec({ affinity: { nodeAffinity } }).affinity).toEqual({ nodeAffinity });
    const strict = {
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          { topologyKey: "topology.kubernetes.io/zone", labelSelector: { matchLabels: { app: "relay" } } },
        ],
      },
    };
    expect(podSpec({ affinity: strict }).affinity).toEqual(strict);
  });

  it("passes nodeSelector, tolerations and priorityClassName through, and leaves them out when not given", () => {
    const tolerations = [{ key: "dedicated", operator: "Equal", value: "relay", effect: "NoSchedule" }];
    const spec = podSpec({ nodeSelector: { pool: "cpu" }, tolerations, priorityClassName: "relay-critical" });
    expect(spec.nodeSelector).toEqual({ pool: "cpu" });
    expect(spec.tolerations).toEqual(tolerations);
    expect(spec.priorityClassName).toBe("relay-critical");
    for (const field of ["nodeSelector", "tolerations", "priorityClassName"])
      expect(podSpec()).not.toHaveProperty(field);
  });

  it("uses spec.imagePullSecrets by name, in order, and sets none when none are given", () => {
    expect(podSpec({ imagePullSecrets: [{ name: "ngc" }, { name: "mirror" }] }).imagePullSecrets).toEqual([
      { name: "ngc" },
      { name: "mirror" },
    ]);
    expect(podSpec()).not.toHaveProperty("imagePullSecrets");
  });
});
