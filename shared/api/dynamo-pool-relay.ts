/**
 * The DynamoPoolRelay API: the single source of truth for the CRD (crds/), the API reference in
 * docs/api.md and the validation the core applies. Every admission rule written as CEL here is also
 * checked by the zod refinements below, so `poolrelay render` rejects what the API server rejects.
 */
import * as z from "../zod.ts";
import { DNS1035_LABEL, MAX_DGD_NAME_LENGTH, SERVICE_SUFFIX } from "../names.ts";
import { RESERVED_ENV, isReservedEnv } from "../relay-env.ts";
import { CEL } from "./admission.ts";
import { LabelSelector } from "./label-selector.ts";
import { MAX_EXCLUDED_SHOWN } from "../selection.ts";
import {
  Condition,
  EnvVar,
  LocalObjectReference,
  ObjectMeta,
  ResourceRequirements,
  Toleration,
  int32,
  int64,
  opaqueObject,
} from "./kubernetes.ts";

export const DEFAULT_REPLICAS = 2;
export const MAX_ENV = 128;

/** Why a name cannot pair with a DGD, or undefined when it can. */
export function serviceNameProblem(name: string): string | undefined {
  if (name.length > MAX_DGD_NAME_LENGTH || !DNS1035_LABEL.test(name)) {
    return (
      `the name "${name}" cannot form the Service name "${name}${SERVICE_SUFFIX}": it must be a DNS-1035 label ` +
      `of at most ${MAX_DGD_NAME_LENGTH} characters (lower-case letters, digits and '-', starting with a letter, no dots)`
    );
  }
  return undefined;
}

const NAME_RULE = {
  rule: `self.metadata.name.size() <= ${MAX_DGD_NAME_LENGTH} && self.metadata.name.matches('${DNS1035_LABEL.source}')`,
  message:
    `metadata.name must be a DNS-1035 label of at most ${MAX_DGD_NAME_LENGTH} characters (lower-case letters, digits and '-', ` +
    `starting with a letter, no dots) so that the Service <name>${SERVICE_SUFFIX} can exist`,
};

const reservedList = `[${RESERVED_ENV.map((n) => `'${n}'`).join(", ")}]`;
/** Per item, so the API server's cost estimate stays small and each offending entry gets its own error. */
const ENV_ITEM_RULE = {
  rule: `!(self.name in ${reservedList})`,
  messageExpression: `'the product sets ' + self.name + ' itself; remove it from spec.env'`,
};

/** What ENV_ITEM_RULE's messageExpression evaluates to for this name. */
export function reservedEnvMessage(name: string): string {
  return `the product sets ${name} itself; remove it from spec.env`;
}

export const DynamoPoolRelaySpec = z
  .object({
    image: z.string().check(
      z.minLength(1),
      z.maxLength(1024),
      z.regex(/^\S+$/),
      z.meta({
        description:
          "Container image of the Relay: a Dynamo runtime image that provides the Relay command (`python3 -m dynamo.kv_dc_relay` unless the operator sets RELAY_COMMAND).",
      }),
    ),
    imagePullPolicy: z
      .optional(z.enum(["Always", "IfNotPresent", "Never"]))
      .check(z.meta({ description: "Pull policy of the Relay image; Kubernetes' default when omitted." })),
    clusterID: z.string().check(
      z.minLength(1),
      z.maxLength(256),
      z.regex(/^\S(.*\S)?$/),
      z.meta({
        description:
          "Stable ID of this cluster, passed to the Relay as its data-center ID (DYN_DC_ID). Changing it starts a new Relay incarnation: the pods roll.",
      }),
    ),
    replicas: z._default(
      int32(
        "Number of Relay pods. Independent of the DynamoGraphDeployment's own replica counts. The scale subresource sets it, so `kubectl scale dpr` and a HorizontalPodAutoscaler can.",
      ).check(z.minimum(0)),
      DEFAULT_REPLICAS,
    ),
    // z.meta adds to the metadata EnvVar has (its description).
    env: z
      .optional(
        z.array(EnvVar.check(z.meta({ "x-kubernetes-validations": [ENV_ITEM_RULE] }))).check(z.maxLength(MAX_ENV)),
      )
      .check(
        z.superRefine((env, ctx) => {
          (env ?? []).forEach(({ name }, i) => {
            if (isReservedEnv(name))
              ctx.addIssue({ code: "custom", path: [i], message: reservedEnvMessage(name), params: CEL });
          });
        }),
        z.meta({
          description: `Extra environment for the Relay container. Names the product sets are rejected: ${RESERVED_ENV.join(", ")}.`,
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["name"],
        }),
      ),
    imagePullSecrets: z.optional(z.array(LocalObjectReference).check(z.maxLength(32))).check(
      z.meta({
        description: "Secrets used to pull the Relay image.",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
      }),
    ),
    resources: z.optional(ResourceRequirements),
    nodeSelector: z
      .optional(z.record(z.string(), z.string().check(z.meta({ description: "The value the node label must have." }))))
      .check(z.meta({ description: "Node labels the Relay pods must be scheduled on." })),
    tolerations: z
      .optional(z.array(Toleration).check(z.maxLength(64)))
      .check(z.meta({ description: "Tolerations of the Relay pods." })),
    affinity: z.optional(
      opaqueObject("Affinity of the Relay pods. When omitted the pods prefer to spread across nodes."),
    ),
    priorityClassName: z
      .optional(z.string().check(z.maxLength(253)))
      .check(z.meta({ description: "PriorityClass of the Relay pods." })),
    dgdSelector: z.optional(LabelSelector).check(
      z.meta({
        description:
          "The DynamoGraphDeployments this Relay serves: every one in this namespace whose labels the selector matches. When omitted, the DynamoGraphDeployment of the same name.",
      }),
    ),
  })
  .check(
    z.meta({
      description:
        "Desired state of the Relay that serves the DynamoGraphDeployment of the same name in the same namespace.",
    }),
  );
export type DynamoPoolRelaySpec = z.infer<typeof DynamoPoolRelaySpec>;

export const DynamoPoolRelayStatus = z
  .object({
    observedGeneration: z.optional(
      int64("The .metadata.generation the status reflects; never moves backwards.").check(z.minimum(0)),
    ),
    conditions: z.optional(z.array(Condition).check(z.maxLength(16))).check(
      z.meta({
        description: "Ready, Eligible, ServicePublished and ListenerAvailable.",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
      }),
    ),
    serviceEndpoint: z.optional(z.string()).check(
      z.meta({
        description:
          "Address of the Relay's gRPC listener, `<dgd>-pool-relay.<namespace>.svc:<port>`, while the Service is published.",
      }),
    ),
    replicas: z.optional(
      int32("Relay pods that exist (from the Deployment's status); the scale subresource's status.replicas.").check(
        z.minimum(0),
      ),
    ),
    readyReplicas: z.optional(int32("Relay pods that are Ready (from the Deployment's status).").check(z.minimum(0))),
    readyOfDesired: z.optional(z.string()).check(
      z.meta({
        description:
          "Ready Relay pods over spec.replicas, e.g. `1/2`, as `kubectl get deploy` shows READY; the Replicas column of `kubectl get dpr`.",
      }),
    ),
    labelSelector: z.optional(z.string()).check(
      z.meta({
        description:
          "Label selector of the Relay pods, e.g. `app.kubernetes.io/instance=<name>,app.kubernetes.io/name=dynamo-pool-relay`; the scale subresource's status.selector, which a HorizontalPodAutoscaler reads to find the pods.",
      }),
    ),
    workerNamespaces: z
      .optional(
        z.array(z.string().check(z.meta({ description: "A Dynamo worker namespace." }))).check(z.maxLength(4096)),
      )
      .check(z.meta({ description: "Dynamo worker namespaces the Relay watches, sorted." })),
    sourcesRevision: z
      .optional(z.string())
      .check(
        z.meta({ description: "SHA-256 of the sources document, equal to the revision the Relay reports as applied." }),
      ),
    connectionRevision: z.optional(z.string()).check(
      z.meta({
        description: "Revision of the Relay's connection settings, in both the sources document and the pod template.",
      }),
    ),
    selectedDGDs: z.optional(
      int32("DynamoGraphDeployments spec.dgdSelector matches (only with a selector).").check(z.minimum(0)),
    ),
    eligibleDGDs: z.optional(
      int32("Of those, the eligible ones, whose worker namespaces the Relay watches (only with a selector).").check(
        z.minimum(0),
      ),
    ),
    excludedDGDs: z
      .optional(
        z
          .array(
            z
              .object({
                name: z.string().check(z.meta({ description: "The DynamoGraphDeployment's name." })),
                reason: z.string().check(z.meta({ description: "Why it is not eligible, as an Eligible reason." })),
                message: z.string().check(z.maxLength(1024), z.meta({ description: "Why, in words." })),
              })
              .check(z.meta({ description: "A selected DynamoGraphDeployment that is not eligible." })),
          )
          .check(z.maxLength(MAX_EXCLUDED_SHOWN)),
      )
      .check(
        z.meta({
          description: `Selected DynamoGraphDeployments that are not eligible, by name: the first ${MAX_EXCLUDED_SHOWN}; selectedDGDs - eligibleDGDs counts them all.`,
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["name"],
        }),
      ),
    sourcesResourceVersion: z.optional(z.string()).check(
      z.meta({
        description:
          "resourceVersion of the sources ConfigMap this status found carrying sourcesRevision. A rollout writes the next document over that very version without reading the ConfigMap first: if anyone changed it since, the write fails and every child is read.",
      }),
    ),
  })
  .check(z.meta({ description: "Observed state of the DynamoPoolRelay." }));
export type DynamoPoolRelayStatus = z.infer<typeof DynamoPoolRelayStatus>;

export const DynamoPoolRelay = z
  .object({
    apiVersion: z.literal("nvidia.com/v1alpha1"),
    kind: z.literal("DynamoPoolRelay"),
    metadata: ObjectMeta,
    spec: DynamoPoolRelaySpec,
    status: z.optional(DynamoPoolRelayStatus),
  })
  .check(
    z.superRefine((dpr, ctx) => {
      // At the root, as the CRD's rule is (CEL reads metadata.name only there), in its words.
      if (serviceNameProblem(dpr.metadata.name))
        ctx.addIssue({ code: "custom", path: [], message: NAME_RULE.message, params: CEL });
    }),
  );
export type DynamoPoolRelay = z.infer<typeof DynamoPoolRelay>;

/** Root-level admission rules of the CRD (CEL may read metadata.name only at the root). */
export const ROOT_VALIDATIONS = [NAME_RULE];
