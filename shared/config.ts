/**
 * Function configuration, parsed from an environment given as a parameter, with one error listing
 * every bad variable.
 */
import type { DecisionSettings } from "./decide.ts";
import { DISCOVERY_BACKENDS } from "./eligibility.ts";
import { DEFAULT_RELAY_COMMAND } from "./relay-env.ts";
import * as z from "./zod.ts";

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
  /**
   * How long status lets the child changes of one burst gather before it reads (apply's reports do
   * not wait); 0, the default, reads at once. A delivery held for the period holds the event
   * source that sent it wherever the Broker delivers within the sender's request (see docs/limits.md).
   */
  statusBatchMs: number;
}

/**
 * RELAY_COMMAND: a JSON array, one element per argument, because the command goes into the pod
 * as an argv list (no shell splits it). The executable must not contain whitespace: a single
 * element such as "python3 -m dynamo.kv_dc_relay" is a mistake that would only show as a pod that
 * cannot start.
 */
const RelayCommand = z.pipe(
  z.pipe(
    z.string(),
    z.transform((text: string, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        // zod/mini hands a transform the parse payload, which has no addIssue.
        ctx.issues.push({
          code: "custom",
          message: `must be a JSON array of strings, such as ${JSON.stringify(DEFAULT_RELAY_COMMAND)}; got ${JSON.stringify(text)}`,
          input: text,
        });
        return z.NEVER;
      }
    }),
  ),
  z
    .array(z.string().check(z.minLength(1)), {
      error: `must be a JSON array of strings, such as ${JSON.stringify(DEFAULT_RELAY_COMMAND)}`,
    })
    .check(
      z.minLength(1, "must name at least the executable"),
      z.refine(
        (command) => !/\s/.test(command[0] ?? ""),
        "the executable (the first element) contains whitespace; give each argument as its own element",
      ),
    ),
);

const Env = z.object({
  DEFAULT_DISCOVERY_BACKEND: z._default(z.enum(DISCOVERY_BACKENDS), "kubernetes"),
  RESYNC_PERIOD_SECONDS: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(86400)), 60),
  RESYNC_SLOTS: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(1440)), 10),
  K_SINK: z.optional(z.url()),
  DGD_API_VERSION: z._default(z.enum(["nvidia.com/v1beta1", "nvidia.com/v1alpha1"]), "nvidia.com/v1beta1"),
  INVOCATION_DEADLINE_SECONDS: z._default(z.coerce.number().check(z.minimum(0.1), z.maximum(3600)), 20),
  RELAY_COMMAND: z.optional(RelayCommand),
  STATUS_BATCH_MS: z._default(z.coerce.number().check(z.int(), z.minimum(0), z.maximum(10000)), 0),
});

/** The event source's (functions/source): the functions do not read these. */
const SourceEnv = z.object({
  K_SINK: z.url({ error: "must be the URL to send events to (the ContainerSource's SinkBinding sets it)" }),
  /** Sends at once in each of the source's lanes (shared/source-events.ts, laneOf). */
  SOURCE_CONCURRENCY: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(256)), 32),
  REQUEUE_SECONDS: z._default(z.coerce.number().check(z.int(), z.minimum(10), z.maximum(3600)), 60),
  SOURCE_BATCH_MS: z._default(z.coerce.number().check(z.int(), z.minimum(0), z.maximum(10000)), 1000),
  SOURCE_RELIST_SECONDS: z._default(z.coerce.number().check(z.int(), z.minimum(0), z.maximum(86400)), 1800),
  /** The pod's name and namespace (the downward API): the Lease's candidate and where the Lease is. */
  POD_NAME: z.optional(z.string().check(z.minLength(1))),
  POD_NAMESPACE: z._default(z.string().check(z.minLength(1)), "dynamo-system"),
  PORT: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(65535)), 8080),
});

export interface SourceConfig {
  sink: string;
  /** Events sent at once, each for a different object. */
  concurrency: number;
  /** A pair not converged is asked for again when it has been quiet this long, or a quarter of it when the functions have not acted on it (shared/requeue.ts, requeueDue). */
  requeueSeconds: number;
  /** How long a child's update waits before it is sent, so that a burst of them leaves as one event. */
  batchMs: number;
  /** How long each watched kind goes before it is listed again and every pair judged afresh (0: only when a watch expired). */
  relistSeconds: number;
  /** This replica, as a candidate for the Lease (the pod's name); the shell names one when unset. */
  identity: string | undefined;
  /** The Lease: only its holder sends. */
  lease: { namespace: string; name: string };
  /** Where /readyz and /livez answer. */
  port: number;
}

export function parseSourceConfig(env: Record<string, string | undefined>): SourceConfig {
  const r = SourceEnv.safeParse(env);
  if (!r.success) {
    throw new Error(
      `invalid configuration: ${r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  }
  const d = r.data;
  return {
    sink: d.K_SINK,
    concurrency: d.SOURCE_CONCURRENCY,
    requeueSeconds: d.REQUEUE_SECONDS,
    batchMs: d.SOURCE_BATCH_MS,
    relistSeconds: d.SOURCE_RELIST_SECONDS,
    identity: d.POD_NAME,
    lease: { namespace: d.POD_NAMESPACE, name: SOURCE_LEASE },
    port: d.PORT,
  };
}

/** The Lease the event source's replicas elect their leader with, in their own namespace. */
export const SOURCE_LEASE = "poolrelay-source";

/** The variables parseConfig and parseSourceConfig read: the README's Configuration table must document each. */
export const CONFIG_VARIABLES = [...new Set([...Object.keys(Env.shape), ...Object.keys(SourceEnv.shape)])];
/** Those only the event source reads. */
export const SOURCE_VARIABLES = Object.keys(SourceEnv.shape).filter((v) => !Object.hasOwn(Env.shape, v));

/** The programs knative/ runs: the four functions (FUNCTION_TARGET) and the event source. */
export const PROGRAMS = ["eligibility", "apply", "status", "dead-letter", "source"] as const;
export type Program = (typeof PROGRAMS)[number];

type Variable = keyof typeof Env.shape;
/** The variables behind each field of Config. */
const FIELD_VARIABLES: Record<keyof Config, readonly Variable[]> = {
  defaults: ["DEFAULT_DISCOVERY_BACKEND", "RELAY_COMMAND"],
  resyncPeriodSeconds: ["RESYNC_PERIOD_SECONDS"],
  resyncSlots: ["RESYNC_SLOTS"],
  sink: ["K_SINK"],
  dgdApiVersion: ["DGD_API_VERSION"],
  deadlineSeconds: ["INVOCATION_DEADLINE_SECONDS"],
  statusBatchMs: ["STATUS_BATCH_MS"],
};

/**
 * The fields of Config each program reads. parseConfig(env, program) gives it no other: reading
 * one throws, so the program's unit tests fail before its manifest is found not to give the
 * variable (test/unit/program-settings.test.ts checks every variable here is given).
 */
const READS: Record<Program, readonly (keyof Config)[]> = {
  eligibility: ["defaults", "resyncPeriodSeconds", "resyncSlots", "sink", "deadlineSeconds"],
  apply: ["defaults", "dgdApiVersion", "deadlineSeconds"],
  status: ["defaults", "dgdApiVersion", "deadlineSeconds", "statusBatchMs"],
  "dead-letter": ["sink", "deadlineSeconds"],
  // The requeue judges each pair as the functions decide it, over the DGDs they read.
  source: ["defaults", "dgdApiVersion"],
};

/** Read by every function's entry point (functions/runtime/entry-settings.ts, body-limit.ts). */
const ENTRY_VARIABLES = ["FUNCTION_TARGET", "FUNCTION_SOURCE", "MAX_EVENT_BYTES", "PORT"];

/** Every variable the program reads: its manifest must give each one. */
export function variablesRead(program: Program): string[] {
  const own = program === "source" ? Object.keys(SourceEnv.shape) : ENTRY_VARIABLES;
  return [...new Set([...READS[program].flatMap((f) => FIELD_VARIABLES[f]), ...own])].sort();
}

/**
 * The functions' settings from `env`. For a program, only the variables it reads are parsed (a bad
 * value it never reads does not stop it) and the fields it does not read throw when read.
 */
export function parseConfig(env: Record<string, string | undefined>, program?: Program): Config {
  const reads = program && new Set(READS[program].flatMap((f) => FIELD_VARIABLES[f]));
  const given = reads ? Object.fromEntries(Object.entries(env).filter(([k]) => reads.has(k as Variable))) : env;
  const r = Env.safeParse(given);
  if (!r.success) {
    throw new Error(
      `invalid configuration: ${r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  }
  const config: Config = {
    defaults: {
      discoveryBackend: r.data.DEFAULT_DISCOVERY_BACKEND,
      relayCommand: r.data.RELAY_COMMAND ?? DEFAULT_RELAY_COMMAND,
    },
    resyncPeriodSeconds: r.data.RESYNC_PERIOD_SECONDS,
    resyncSlots: r.data.RESYNC_SLOTS,
    sink: r.data.K_SINK,
    dgdApiVersion: r.data.DGD_API_VERSION,
    deadlineSeconds: r.data.INVOCATION_DEADLINE_SECONDS,
    statusBatchMs: r.data.STATUS_BATCH_MS,
  };
  if (!program) return config;
  for (const field of Object.keys(config) as (keyof Config)[]) {
    if (READS[program].includes(field)) continue;
    Object.defineProperty(config, field, {
      enumerable: false,
      get() {
        throw new Error(
          `${program} read ${FIELD_VARIABLES[field].join(" and ")}, which shared/config.ts does not list among what ${program} reads`,
        );
      },
    });
  }
  return config;
}
