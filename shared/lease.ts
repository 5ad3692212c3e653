/**
 * Leader election over a coordination.k8s.io/v1 Lease, as client-go's leaderelection package does
 * it (tryAcquireOrRenew): the event source runs as several replicas, each watching and keeping its
 * cache warm, and only the holder of the Lease sends. A candidate never trusts another's clock: a
 * Lease counts as lapsed when its record has not changed for its duration by the candidate's own
 * clock, from when the candidate saw that record. Every write names the version it was decided
 * from, so of two candidates that both see a lapsed Lease only one takes it (the other gets 409).
 * The decisions are here; the reads and writes in functions/source/elector.ts.
 */

export interface LeaseSpec {
  holderIdentity?: string | undefined;
  leaseDurationSeconds?: number | undefined;
  acquireTime?: string | undefined;
  renewTime?: string | undefined;
  leaseTransitions?: number | undefined;
}

export interface ElectionSettings {
  /** This candidate (the pod's name). */
  identity: string;
  /** How long a Lease not renewed stays its holder's. */
  leaseDurationMs: number;
  /** How often the holder renews it. */
  renewEveryMs: number;
  /** How long the holder keeps leading without a successful renewal: less than the duration, so it stops before another may start. */
  renewDeadlineMs: number;
}

/** The Lease as last seen: its spec and version, and when (by this candidate's clock) that record was first seen. */
export interface ObservedLease {
  spec: LeaseSpec;
  resourceVersion: string;
  observedAt: number;
}

export type LeaseStep =
  /** No Lease: create it, held by this candidate. */
  | { action: "create"; spec: LeaseSpec }
  /** Write the Lease over the version seen: renew it (held here), or take it over (lapsed, or released). */
  | { action: "acquire" | "renew"; spec: LeaseSpec }
  /** Another holds it: look again once it may have lapsed. */
  | { action: "wait"; retryInMs: number };

/** MicroTime, as the API server stores a Lease's times. */
export const microTime = (ms: number): string => new Date(ms).toISOString().replace("Z", "000Z");

/**
 * The next step for this candidate, given the Lease as last seen (undefined when none exists).
 *
 * @param now this candidate's clock (ms)
 */
export function leaseStep(lease: ObservedLease | undefined, now: number, settings: ElectionSettings): LeaseStep {
  const durationSeconds = Math.ceil(settings.leaseDurationMs / 1000);
  const mine = (acquired: string | undefined, transitions: number): LeaseSpec => ({
    holderIdentity: settings.identity,
    leaseDurationSeconds: durationSeconds,
    acquireTime: acquired ?? microTime(now),
    renewTime: microTime(now),
    leaseTransitions: transitions,
  });
  if (!lease) return { action: "create", spec: mine(undefined, 0) };
  const { spec } = lease;
  const transitions = spec.leaseTransitions ?? 0;
  if (spec.holderIdentity === settings.identity) return { action: "renew", spec: mine(spec.acquireTime, transitions) };
  const lapsesAt = lease.observedAt + (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
  // Released (no holder) or lapsed by this candidate's clock: take it over.
  if (!spec.holderIdentity || now >= lapsesAt) return { action: "acquire", spec: mine(undefined, transitions + 1) };
  return { action: "wait", retryInMs: lapsesAt - now };
}

/** What a holder writes to give the Lease up at once (client-go's ReleaseOnCancel): no holder, a lease of one second. */
export function released(spec: LeaseSpec, now: number): LeaseSpec {
  return { ...spec, holderIdentity: "", leaseDurationSeconds: 1, renewTime: microTime(now) };
}

/**
 * Whether this candidate leads now: it holds the Lease by the last record it wrote or saw, and
 * renewed it successfully within the renew deadline (a holder that cannot renew stops sending
 * before any other candidate can see the Lease lapse).
 *
 * @param renewedAt when its last successful create, acquire or renew was sent (ms), undefined if never
 */
export function leading(
  lease: ObservedLease | undefined,
  renewedAt: number | undefined,
  now: number,
  settings: ElectionSettings,
): boolean {
  return (
    lease?.spec.holderIdentity === settings.identity &&
    renewedAt !== undefined &&
    now - renewedAt < settings.renewDeadlineMs
  );
}
