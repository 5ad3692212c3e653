/**
 * The parts of a DynamoGraphDeployment the product reads, in both served shapes: v1beta1 lists
 * components in spec.components[], v1alpha1 maps them in spec.services{}. Everything else passes
 * through untouched; the Dynamo operator owns that schema.
 */
import * as z from "../zod.ts";
import { ObjectMeta } from "./kubernetes.ts";

const Annotations = z.record(z.string(), z.string());

const V1beta1Component = z.looseObject({
  name: z.string().check(z.minLength(1)),
  type: z.optional(z.string()),
  globalDynamoNamespace: z.optional(z.boolean()),
  podTemplate: z.optional(
    z.looseObject({
      metadata: z.optional(z.looseObject({ annotations: z.optional(Annotations) })),
    }),
  ),
});

const V1alpha1Service = z.looseObject({
  componentType: z.optional(z.string()),
  subComponentType: z.optional(z.string()),
  globalDynamoNamespace: z.optional(z.boolean()),
  annotations: z.optional(Annotations),
});

const ComponentStatus = z.looseObject({
  componentNames: z.optional(z.array(z.string())),
});

export const DynamoGraphDeployment = z.looseObject({
  apiVersion: z.enum(["nvidia.com/v1beta1", "nvidia.com/v1alpha1"]),
  kind: z.literal("DynamoGraphDeployment"),
  metadata: ObjectMeta,
  spec: z.optional(
    z.looseObject({
      components: z.optional(z.array(V1beta1Component)),
      services: z.optional(z.record(z.string(), z.nullable(V1alpha1Service))),
    }),
  ),
  status: z.optional(
    z.looseObject({
      components: z.optional(z.record(z.string(), ComponentStatus)),
    }),
  ),
});
export type DynamoGraphDeployment = z.infer<typeof DynamoGraphDeployment>;

/** A component of either shape, reduced to what the product decides on. */
export interface Component {
  name: string;
  type: string | undefined;
  globalDynamoNamespace: boolean;
  annotations: Record<string, string>;
}

export const WORKER_TYPES = ["worker", "prefill", "decode"] as const;

export function isWorker(component: Component): boolean {
  return (WORKER_TYPES as readonly (string | undefined)[]).includes(component.type);
}

/** The DGD's components in a shape-independent form, in the order the DGD lists them. */
export function components(dgd: DynamoGraphDeployment): Component[] {
  const spec = dgd.spec ?? {};
  const fromList = (spec.components ?? []).map((c) => ({
    name: c.name,
    type: c.type,
    globalDynamoNamespace: c.globalDynamoNamespace === true,
    annotations: c.podTemplate?.metadata?.annotations ?? {},
  }));
  const fromMap = Object.entries(spec.services ?? {})
    // By name; the names of a map's entries are distinct, so never equal.
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, s]) => ({
      name,
      type: s?.componentType,
      globalDynamoNamespace: s?.globalDynamoNamespace === true,
      annotations: s?.annotations ?? {},
    }));
  return [...fromList, ...fromMap];
}
