/**
 * Function configuration, parsed from an environment given as a parameter, with one error listing
 * every bad variable.
 */
import { z } from "zod";
import { DISCOVERY_BACKENDS, type OperatorDefaults } from "./eligibility.ts";

export interface Config {
  defaults: OperatorDefaults;
  /** Period of the resync PingSource; ticks are counted in it. */
  resyncPeriodSeconds: number;
  /** Every DynamoPoolRelay is fully reconciled once every this many resync ticks. */
  resyncSlots: number;
  /** Where the resync emits its reconcile requests (set by a SinkBinding on Knative). */
  sink: string | undefined;
  /** The DynamoGraphDeployment version to read: one the cluster serves (v1beta1 on current Dynamo). */
  dgdApiVersion: string;
  /** Each invocation's time, below its Knative Service timeout and Trigger delivery timeout. */
  deadlineSeconds: number;
}

const Env = z.object({
  DEFAULT_DISCOVERY_BACKEND: z.enum(DISCOVERY_BACKENDS).default("kubernetes"),
  RESYNC_PERIOD_SECONDS: z.coerce.number().int().min(1).max(86400).default(60),
  RESYNC_SLOTS: z.coerce.number().int().min(1).max(1440).default(10),
  K_SINK: z.url().optional(),
  DGD_API_VERSION: z.enum(["nvidia.com/v1beta1", "nvidia.com/v1alpha1"]).default("nvidia.com/v1beta1"),
  INVOCATION_DEADLINE_SECONDS: z.coerce.number().min(0.1).max(3600).default(20),
});

export function parseConfig(env: Record<string, string | undefined>): Config {
  const r = Env.safeParse(env);
  if (!r.success) {
    throw new Error(`invalid configuration: ${r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  }
  return {
    defaults: { discoveryBackend: r.data.DEFAULT_DISCOVERY_BACKEND },
    resyncPeriodSeconds: r.data.RESYNC_PERIOD_SECONDS,
    resyncSlots: r.data.RESYNC_SLOTS,
    sink: r.data.K_SINK,
    dgdApiVersion: r.data.DGD_API_VERSION,
    deadlineSeconds: r.data.INVOCATION_DEADLINE_SECONDS,
  };
}
