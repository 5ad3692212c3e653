/**
 * The event source's leader election: reads and writes one Lease as shared/lease.ts decides. The
 * Lease is watched, so a standby learns of a renewal or a release without asking, and the holder
 * writes only to renew it (every `renewEveryMs`).
 */
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import { ApiError, isConflict } from "../../shared/kube/errors.ts";
import {
  leading,
  leaseStep,
  released,
  type ElectionSettings,
  type LeaseSpec,
  type ObservedLease,
} from "../../shared/lease.ts";

const LEASE_API = "coordination.k8s.io/v1";
const RETRY_MS = 2_000;

type Lease = KubeObject & { spec?: LeaseSpec };

export interface ElectorHooks {
  /** Leading began or ended. */
  changed(leading: boolean): void;
  log(fields: Record<string, unknown>): void;
}

export class Elector {
  private lease: ObservedLease | undefined;
  private renewedAt: number | undefined;
  private wasLeading = false;
  private wake: (() => void) | undefined;

  private readonly kube: KubeClient;
  private readonly ref: { namespace: string; name: string };
  private readonly settings: ElectionSettings;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly hooks: ElectorHooks;

  constructor(
    kube: KubeClient,
    ref: { namespace: string; name: string },
    settings: ElectionSettings,
    clock: { now: () => number; sleep: (ms: number) => Promise<void> },
    hooks: ElectorHooks,
  ) {
    this.kube = kube;
    this.ref = ref;
    this.settings = settings;
    this.now = clock.now;
    this.sleep = clock.sleep;
    this.hooks = hooks;
  }

  get leading(): boolean {
    return leading(this.lease, this.renewedAt, this.now(), this.settings);
  }

  /** Elects until `signal` aborts; a holder then gives the Lease up (`release`), so another takes over at once. */
  async run(signal: AbortSignal): Promise<void> {
    void this.watch(signal);
    while (!signal.aborted) {
      let wait = RETRY_MS;
      try {
        wait = await this.step();
      } catch (err) {
        this.hooks.log({ msg: "lease failed", error: err instanceof Error ? err.message : String(err) });
        if (isConflict(err) || (err instanceof ApiError && err.status === 404)) await this.read();
      }
      this.notice();
      await Promise.race([this.sleep(wait), new Promise<void>((resolve) => (this.wake = resolve))]);
      this.notice();
    }
  }

  /** Gives the Lease up when held: its holder empty, so a standby takes it at its next look. */
  async release(): Promise<void> {
    const lease = this.lease;
    if (!this.leading || !lease) return;
    this.renewedAt = undefined;
    this.notice();
    await this.kube
      .replace(this.object(released(lease.spec, this.now()), lease.resourceVersion))
      .catch((err: unknown) => {
        this.hooks.log({ msg: "lease not released", error: err instanceof Error ? err.message : String(err) });
      });
  }

  /** One step of the election; resolves with how long to wait before the next. */
  private async step(): Promise<number> {
    if (!this.lease) await this.read();
    const started = this.now();
    const step = leaseStep(this.lease, started, this.settings);
    if (step.action === "wait") return step.retryInMs;
    const written =
      step.action === "create"
        ? await this.kube.create<Lease>(this.object(step.spec))
        : await this.kube.replace<Lease>(this.object(step.spec, this.lease!.resourceVersion));
    // From when the write was sent: no other candidate can have seen it earlier, so none can see
    // the Lease lapse before this time plus its duration. A slow answer shortens no renewal.
    this.renewedAt = started;
    this.seen(written);
    if (step.action !== "renew")
      this.hooks.log({
        msg: "lease acquired",
        identity: this.settings.identity,
        transitions: step.spec.leaseTransitions,
      });
    return Math.max(0, started + this.settings.renewEveryMs - this.now());
  }

  private object(spec: LeaseSpec, resourceVersion?: string): KubeObject {
    return {
      apiVersion: LEASE_API,
      kind: "Lease",
      metadata: { ...this.ref, ...(resourceVersion ? { resourceVersion } : {}) },
      spec,
    };
  }

  private async read(): Promise<void> {
    const lease = await this.kube.get<Lease>({ apiVersion: LEASE_API, kind: "Lease", ...this.ref });
    if (lease) this.seen(lease);
    else this.lease = undefined;
  }

  /** A version of the Lease: a new record starts its lapse time from now, by this candidate's clock. */
  private seen(lease: Lease): void {
    const resourceVersion = lease.metadata.resourceVersion ?? "";
    if (this.lease?.resourceVersion === resourceVersion) return;
    this.lease = { spec: lease.spec ?? {}, resourceVersion, observedAt: this.now() };
  }

  private notice(): void {
    const now = this.leading;
    if (now === this.wasLeading) return;
    this.wasLeading = now;
    this.hooks.changed(now);
  }

  /** Keeps the Lease as last written by anyone; a change (a release, a takeover) wakes the election. */
  private async watch(signal: AbortSignal): Promise<void> {
    let version: string | undefined;
    while (!signal.aborted) {
      try {
        if (version === undefined) {
          await this.read();
          version = this.lease?.resourceVersion ?? "0";
        }
        version = await this.kube.listAndWatch<Lease>(
          LEASE_API,
          "Lease",
          undefined,
          (type, lease) => {
            version = lease.metadata.resourceVersion ?? version;
            if (type === "DELETED") this.lease = undefined;
            else this.seen(lease);
            // Another's record (a release, a takeover) may change what this candidate does now; its own renewal does not.
            if (this.lease?.spec.holderIdentity !== this.settings.identity) this.wake?.();
          },
          AbortSignal.any([signal, AbortSignal.timeout(5 * 60_000)]),
          version,
          undefined,
          { namespace: this.ref.namespace, fieldSelector: `metadata.name=${this.ref.name}` },
        );
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof ApiError && err.status === 410) version = undefined;
        else await this.sleep(RETRY_MS);
      }
    }
  }
}
