/**
 * The parts of a DynamoGraphDeployment the product reads, in both served shapes: v1beta1 lists
 * components in spec.components[], v1alpha1 maps them in spec.services{}. Everything else passes
 * through untouched; the Dynamo operator owns that schema.
 */
import { z } from "zod";
import { ObjectMeta } from "./kubernetes.ts";

const Annotations = z.record(z.string(), z.string());

const V1beta1Component = z.looseObject({
  name: z.string().min(1),
  type: z.string().optional(),
  globalDynamoNamespace: z.boolean().optional(),
  podTemplate: z.looseObject({
    metadata: z.looseObject({ annotations: Annotations.optional() }).optional(),
  }).optional(),
});

const V1alpha1Service = z.looseObject({
  componentType: z.string().optional(),
  subComponentType: z.string().optional(),
  globalDynamoNamespace: z.boolean().optional(),
  annotations: Annotations.optional(),
});

const ComponentStatus = z.looseObject({
  componentNames: z.array(z.string()).optional(),
});

export const DynamoGraphDeployment = z.looseObject({
  apiVersion: z.enum(["nvidia.com/v1beta1", "nvidia.com/v1alpha1"]),
  kind: z.literal("DynamoGraphDeployment"),
  metadata: ObjectMeta,
  spec: z.looseObject({
    components: z.array(V1beta1Component).optional(),
    services: z.record(z.string(), V1alpha1Service.nullable()).optional(),
  }).optional(),
  status: z.looseObject({
    components: z.record(z.string(), ComponentStatus).optional(),
  }).optional(),
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
