/**
 * Function configuration, parsed from an environment given as a parameter, with one error listing
 * every bad variable.
 */
import { z } from "zod";
import type { DecisionSettings } from "./decide.ts";
import { DISCOVERY_BACKENDS } from "./eligibility.ts";
import { DEFAULT_RELAY_COMMAND } from "./relay-env.ts";

export interface Config {
  /** What decide() takes. The Relay command is required here: the functions decide with what is configured, never with decide()'s fallback. */
  defaults: Required<DecisionSettings>;
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

/**
 * RELAY_COMMAND: a JSON array, one element per argument, because the command goes into the pod
 * as an argv list (no shell splits it). The executable must not contain whitespace: a single
 * element such as "python3 -m dynamo.kv_dc_relay" is a mistake that would only show as a pod that
 * cannot start.
 */
const RelayCommand = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: "custom", message: `must be a JSON array of strings, such as ${JSON.stringify(DEFAULT_RELAY_COMMAND)}; got ${JSON.stringify(text)}` });
      return z.NEVER;
    }
  })
  .pipe(
    z
      .array(z.string().min(1), { error: `must be a JSON array of strings, such as ${JSON.stringify(DEFAULT_RELAY_COMMAND)}` })
      .min(1, "must name at least the executable")
      .refine((command) => !/\s/.test(command[0] ?? ""), "the executable (the first element) contains whitespace; give each argument as its own element"),
  );

const Env = z.object({
  DEFAULT_DISCOVERY_BACKEND: z.enum(DISCOVERY_BACKENDS).default("kubernetes"),
  RESYNC_PERIOD_SECONDS: z.coerce.number().int().min(1).max(86400).default(60),
  RESYNC_SLOTS: z.coerce.number().int().min(1).max(1440).default(10),
  K_SINK: z.url().optional(),
  DGD_API_VERSION: z.enum(["nvidia.com/v1beta1", "nvidia.com/v1alpha1"]).default("nvidia.com/v1beta1"),
  INVOCATION_DEADLINE_SECONDS: z.coerce.number().min(0.1).max(3600).default(20),
  RELAY_COMMAND: RelayCommand.optional(),
});

export function parseConfig(env: Record<string, string | undefined>): Config {
  const r = Env.safeParse(env);
  if (!r.success) {
    throw new Error(`invalid configuration: ${r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  }
  return {
    defaults: { discoveryBackend: r.data.DEFAULT_DISCOVERY_BACKEND, relayCommand: r.data.RELAY_COMMAND ?? DEFAULT_RELAY_COMMAND },
    resyncPeriodSeconds: r.data.RESYNC_PERIOD_SECONDS,
    resyncSlots: r.data.RESYNC_SLOTS,
    sink: r.data.K_SINK,
    dgdApiVersion: r.data.DGD_API_VERSION,
    deadlineSeconds: r.data.INVOCATION_DEADLINE_SECONDS,
  };
}
