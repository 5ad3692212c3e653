/**
 * zod schemas for the Kubernetes core types the DynamoPoolRelay spec embeds. They are as strict as
 * the API server is on the fields we read and pass everything else through, because the API server
 * is the authority on the rest of a PodSpec.
 */
import { z } from "zod";

export const int32 = (description: string) =>
  z.int().min(-2147483648).max(2147483647).meta({ description, format: "int32" });
export const int64 = (description: string) => z.int().meta({ description, format: "int64" });

/** Kubernetes `IntOrString`, as used by resource quantities. */
export const intOrString = (description: string) =>
  z.union([z.int(), z.string()]).meta({ description, "x-kubernetes-int-or-string": true });

/** An object the API server validates in full; we keep it as given. */
export const opaqueObject = (description: string) =>
  z.looseObject({}).meta({ description });

export const EnvVar = z
  .object({
    name: z.string().min(1).max(256).meta({ description: "Name of the environment variable." }),
    value: z.string().optional().meta({ description: "Value of the variable; `$(VAR)` references expand as in any container." }),
    valueFrom: opaqueObject("Source of the value (secretKeyRef, configMapKeyRef, fieldRef, resourceFieldRef), as in a container's env.").optional(),
  })
  .meta({ description: "An environment variable, as in a Kubernetes container." });
export type EnvVar = z.infer<typeof EnvVar>;

export const LocalObjectReference = z
  .object({
    name: z.string().min(1).meta({ description: "Name of the Secret in the DynamoPoolRelay's namespace." }),
  })
  .meta({ description: "A Secret in the DynamoPoolRelay's namespace, by name." });

export const ResourceRequirements = z
  .object({
    requests: z.record(z.string(), intOrString("A quantity, e.g. 500m or 1Gi.")).optional()
      .meta({ description: "Minimum resources the Relay container is scheduled with." }),
    limits: z.record(z.string(), intOrString("A quantity, e.g. 2 or 4Gi.")).optional()
      .meta({ description: "Maximum resources the Relay container may use." }),
  })
  .meta({ description: "Compute resources of the Relay container. When omitted the product requests cpu 1 and memory 1Gi and limits memory to 4Gi, as the Relay's deployment guide does." });
export type ResourceRequirements = z.infer<typeof ResourceRequirements>;

export const Toleration = opaqueObject("A toleration, as in a Pod spec.");

/** metav1.Condition. */
export const Condition = z.object({
  type: z.string().min(1).max(316).meta({ description: "Condition type, e.g. Ready." }),
  status: z.enum(["True", "False", "Unknown"]).meta({ description: "True, False or Unknown." }),
  observedGeneration: int64("The .metadata.generation the condition was computed for.").min(0).optional(),
  lastTransitionTime: z.string().meta({ description: "When the status last changed.", format: "date-time" }),
  reason: z.string().min(1).max(1024).regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/)
    .meta({ description: "CamelCase reason for the last transition." }),
  message: z.string().max(32768).meta({ description: "A sentence for people." }),
}).meta({ description: "A condition of the DynamoPoolRelay, as metav1.Condition." });
export type Condition = z.infer<typeof Condition>;

/** The ObjectMeta fields the product reads. */
export const ObjectMeta = z.looseObject({
  name: z.string().min(1),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  generation: z.int().optional(),
  resourceVersion: z.string().optional(),
  deletionTimestamp: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});
