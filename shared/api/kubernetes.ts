/**
 * zod schemas for the Kubernetes core types the DynamoPoolRelay spec embeds. They are as strict as
 * the API server is on the fields we read and pass everything else through, because the API server
 * is the authority on the rest of a PodSpec.
 */
import * as z from "../zod.ts";

export const int32 = (description: string) =>
  z.int().check(z.minimum(-2147483648), z.maximum(2147483647), z.meta({ description, format: "int32" }));
export const int64 = (description: string) => z.int().check(z.meta({ description, format: "int64" }));

/** Kubernetes `IntOrString`, as used by resource quantities. */
export const intOrString = (description: string) =>
  z.union([z.int(), z.string()]).check(z.meta({ description, "x-kubernetes-int-or-string": true }));

/** An object the API server validates in full; we keep it as given. */
export const opaqueObject = (description: string) => z.looseObject({}).check(z.meta({ description }));

export const EnvVar = z
  .object({
    name: z
      .string()
      .check(z.minLength(1), z.maxLength(256), z.meta({ description: "Name of the environment variable." })),
    value: z
      .optional(z.string())
      .check(z.meta({ description: "Value of the variable; `$(VAR)` references expand as in any container." })),
    valueFrom: z.optional(
      opaqueObject(
        "Source of the value (secretKeyRef, configMapKeyRef, fieldRef, resourceFieldRef), as in a container's env.",
      ),
    ),
  })
  .check(z.meta({ description: "An environment variable, as in a Kubernetes container." }));
export type EnvVar = z.infer<typeof EnvVar>;

export const LocalObjectReference = z
  .object({
    name: z
      .string()
      .check(z.minLength(1), z.meta({ description: "Name of the Secret in the DynamoPoolRelay's namespace." })),
  })
  .check(z.meta({ description: "A Secret in the DynamoPoolRelay's namespace, by name." }));

export const ResourceRequirements = z
  .object({
    requests: z
      .optional(z.record(z.string(), intOrString("A quantity, e.g. 500m or 1Gi.")))
      .check(z.meta({ description: "Minimum resources the Relay container is scheduled with." })),
    limits: z
      .optional(z.record(z.string(), intOrString("A quantity, e.g. 2 or 4Gi.")))
      .check(z.meta({ description: "Maximum resources the Relay container may use." })),
  })
  .check(
    z.meta({
      description:
        "Compute resources of the Relay container. When omitted the product requests cpu 1 and memory 1Gi and limits memory to 4Gi, as the Relay's deployment guide does.",
    }),
  );
export type ResourceRequirements = z.infer<typeof ResourceRequirements>;

export const Toleration = opaqueObject("A toleration, as in a Pod spec.");

/** metav1.Condition. */
export const Condition = z
  .object({
    type: z.string().check(z.minLength(1), z.maxLength(316), z.meta({ description: "Condition type, e.g. Ready." })),
    status: z.enum(["True", "False", "Unknown"]).check(z.meta({ description: "True, False or Unknown." })),
    observedGeneration: z.optional(
      int64("The .metadata.generation the condition was computed for.").check(z.minimum(0)),
    ),
    lastTransitionTime: z.string().check(z.meta({ description: "When the status last changed.", format: "date-time" })),
    reason: z
      .string()
      .check(
        z.minLength(1),
        z.maxLength(1024),
        z.regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/),
        z.meta({ description: "CamelCase reason for the last transition." }),
      ),
    message: z.string().check(z.maxLength(32768), z.meta({ description: "A sentence for people." })),
  })
  .check(z.meta({ description: "A condition of the DynamoPoolRelay, as metav1.Condition." }));
export type Condition = z.infer<typeof Condition>;

/** The ObjectMeta fields the product reads. */
export const ObjectMeta = z.looseObject({
  name: z.string().check(z.minLength(1)),
  namespace: z.optional(z.string()),
  uid: z.optional(z.string()),
  generation: z.optional(z.int()),
  resourceVersion: z.optional(z.string()),
  deletionTimestamp: z.optional(z.string()),
  labels: z.optional(z.record(z.string(), z.string())),
  annotations: z.optional(z.record(z.string(), z.string())),
});
