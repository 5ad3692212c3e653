/**
 * Pod-seconds an idle hour costs each function, from Knative's autoscaling rules (KPA) and the
 * Services' annotations; Knative Serving does not run here, so this is computed, not measured.
 *
 * After the last request of a wake-up the revision keeps its pod for the stable window (the
 * `window` annotation, else `stable-window`, 60 s), then for up to `scale-to-zero-grace-period`
 * (30 s, cluster-wide) while the activator is put in the path, at least for
 * `scale-to-zero-pod-retention-period`; the terminating pod then sits in queue-proxy's preStop drain
 * (30 s), cut short by the pod's termination grace period, which Knative sets to the revision's
 * `timeoutSeconds`. The function then exits on its SIGTERM at once (functions/runtime/drain.ts;
 * before it handled SIGTERM, as PID 1 it stayed until SIGKILL at the end of the grace period).
 * When wake-ups come closer together than that, the pod never leaves.
 */
export const CLUSTER = { stableWindowSeconds: 60, graceSeconds: 30, drainSeconds: 30 };

export interface Scaling {
  windowSeconds: number;
  retentionSeconds: number;
  /** The revision's timeoutSeconds, Knative's terminationGracePeriodSeconds for its pods. */
  terminationSeconds: number;
}

export interface IdleCost {
  wakesPerHour: number;
  /** Lower and upper bound: the grace period is an upper bound. */
  podSeconds: [number, number];
}

/** "10s", "1m", "1m30s", "1h": the durations Knative's annotations take. */
export function seconds(duration: string): number {
  const parts = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(duration);
  if (!parts || duration === "") throw new Error(`not a duration: ${JSON.stringify(duration)}`);
  const [, h = "0", m = "0", s = "0"] = parts;
  return Number(h) * 3600 + Number(m) * 60 + Number(s);
}

/** Knative's default revision timeout (config-defaults revision-timeout-seconds). */
export const DEFAULT_TIMEOUT_SECONDS = 300;

export function scaling(annotations: Record<string, string> = {}, timeoutSeconds = DEFAULT_TIMEOUT_SECONDS): Scaling {
  const window = annotations["autoscaling.knative.dev/window"];
  const retention = annotations["autoscaling.knative.dev/scale-to-zero-pod-retention-period"];
  return {
    windowSeconds: window === undefined ? CLUSTER.stableWindowSeconds : seconds(window),
    retentionSeconds: retention === undefined ? 0 : seconds(retention),
    terminationSeconds: timeoutSeconds,
  };
}

/** Ticks an hour of a PingSource schedule: `* * * * *` or `*\/N * * * *` (minutes). */
export function ticksPerHour(schedule: string): number {
  const every = /^(?:\*|\*\/(\d+)) \* \* \* \*$/.exec(schedule.trim());
  if (!every)
    throw new Error(`only "* * * * *" and "*/N * * * *" schedules are modelled, got ${JSON.stringify(schedule)}`);
  const n = Number(every[1] ?? 1);
  if (n < 1 || 60 % n !== 0) throw new Error(`*/${n} does not divide the hour evenly`);
  return 60 / n;
}

/** Chance that a tick finds at least one of `objects` DynamoPoolRelays in its periodic slot. */
export function periodicWakeChance(objects: number, slots: number): number {
  return 1 - (1 - 1 / slots) ** objects;
}

/** Pod-seconds of one idle hour of a function woken `wakesPerHour` times, each busy `busySeconds`. */
export function idleCost(s: Scaling, wakesPerHour: number, busySeconds: number): IdleCost {
  if (wakesPerHour === 0) return { wakesPerHour, podSeconds: [0, 0] };
  const gap = 3600 / wakesPerHour;
  const going = Math.min(CLUSTER.drainSeconds, s.terminationSeconds);
  const stay = (grace: number) => {
    const serving = busySeconds + Math.max(s.windowSeconds + grace, s.retentionSeconds);
    // Woken again before scaling down: the pod never leaves. Woken while it drains: a new pod
    // starts beside it, so both count.
    return serving >= gap ? 3600 : wakesPerHour * (serving + going);
  };
  return { wakesPerHour, podSeconds: [stay(0), stay(CLUSTER.graceSeconds)] };
}
