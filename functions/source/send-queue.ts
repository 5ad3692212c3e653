/**
 * The events the source sends, a workqueue's way: one pending event per key (a newer one replaces
 * it, or is merged with it: the functions re-read the objects, so only the latest matters), one
 * send per key at a time, so a key's events arrive in order, and `concurrency` keys sent at once, so no slow delivery
 * holds the others (Knative's adapter sends one event at a time per kind). A send that fails is
 * tried again, with backoff, until it is delivered or a newer event of its key replaces it;
 * nothing is dropped but an event the sink refuses as malformed. An event may be held for a while
 * first (a debounce), so that a burst of changes of one object leaves as one event.
 */
import type { CloudEvent } from "../../shared/cloudevent.ts";

/** Posts one event; resolves with the HTTP status, rejects when nothing answered. */
export type Post = (event: CloudEvent) => Promise<number>;

/** What the queue tells its owner: for the log, and when a key has nothing left to send. */
export interface SendHooks {
  /** An event the sink refused for good (a 4xx it will refuse again): dropped. */
  refused(info: { key: string; id: string; type: string; status: number }): void;
  /** A failed attempt, tried again after `retryInMs` unless a newer event replaces it. */
  retrying(info: { key: string; id: string; status: number | string; retryInMs: number }): void;
  /** The key's last event has left: delivered or refused, with nothing newer queued behind it. */
  settled(key: string): void;
}

/** Answers the Broker's ingress gives that pass with time (Knative's own sender retries these, and also 500). */
const transient = (status: number) =>
  status >= 500 || status === 404 || status === 408 || status === 409 || status === 425 || status === 429;
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 30_000;

export class SendQueue {
  private readonly pending = new Map<string, CloudEvent>();
  private readonly inFlight = new Set<string>();
  /** Keys waiting out their hold before they may be sent. */
  private readonly holding = new Set<string>();
  /** Keys ready to be sent, and sends under way, per lane. */
  private readonly ready = new Map<string, string[]>();
  private readonly running = new Map<string, number>();
  private idleWaiters: (() => void)[] = [];
  /** Events delivered, and attempts that failed. */
  readonly counts = { sent: 0, superseded: 0, failedAttempts: 0, refused: 0 };

  private readonly post: Post;
  private readonly concurrency: number;
  private readonly log: SendHooks;
  private readonly sleep: (ms: number) => Promise<void>;

  private readonly merge: (pending: CloudEvent, next: CloudEvent) => CloudEvent;
  private readonly laneOf: (key: string) => string;

  /**
   * @param concurrency sends at once in each lane
   * @param options.merge the one event to send for a key's event not sent yet and a newer one: the newer, unless told otherwise
   * @param options.laneOf the lane of a key (always the same for one key): a lane's slow sends never hold another's; one lane unless told otherwise
   */
  constructor(
    post: Post,
    concurrency: number,
    log: SendHooks,
    sleep: (ms: number) => Promise<void>,
    options: { merge?: (pending: CloudEvent, next: CloudEvent) => CloudEvent; laneOf?: (key: string) => string } = {},
  ) {
    this.post = post;
    this.concurrency = concurrency;
    this.log = log;
    this.sleep = sleep;
    this.merge = options.merge ?? ((_pending, next) => next);
    this.laneOf = options.laneOf ?? (() => "");
  }

  /**
   * Queues the event of `key`, merged with one of the same key that has not left yet. With `holdMs`,
   * a key with nothing queued waits that long before it may be sent, so that the changes of a
   * burst (a Deployment's status as each Relay pod becomes ready) leave as one event, the newest.
   */
  push(key: string, event: CloudEvent, holdMs = 0): void {
    const pending = this.pending.get(key);
    if (pending) this.counts.superseded++;
    else if (this.inFlight.has(key)) {
      // Readied when the send in flight ends: order per key.
    } else if (holdMs > 0) {
      this.holding.add(key);
      void this.sleep(holdMs).then(() => {
        this.holding.delete(key);
        if (this.pending.has(key) && !this.inFlight.has(key)) this.readyUp(key);
        this.pump();
      });
    } else this.readyUp(key);
    this.pending.set(key, pending ? this.merge(pending, event) : event);
    this.pump();
  }

  /** Whether an event of the key is queued, held or being sent. */
  holds(key: string): boolean {
    return this.pending.has(key) || this.inFlight.has(key);
  }

  get size(): number {
    return this.pending.size + this.inFlight.size;
  }

  /** Resolves when nothing is pending or being sent. */
  idle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private readyUp(key: string): void {
    const lane = this.laneOf(key);
    const ready = this.ready.get(lane);
    if (ready) ready.push(key);
    else this.ready.set(lane, [key]);
  }

  private pump(): void {
    for (const [lane, ready] of this.ready) {
      while ((this.running.get(lane) ?? 0) < this.concurrency && ready.length > 0) {
        const key = ready.shift()!;
        const event = this.pending.get(key)!;
        this.pending.delete(key);
        this.inFlight.add(key);
        this.running.set(lane, (this.running.get(lane) ?? 0) + 1);
        void this.send(key, event).finally(() => {
          this.running.set(lane, this.running.get(lane)! - 1);
          this.inFlight.delete(key);
          // An event that came while this one was sent waits for it: order per key.
          if (this.pending.has(key)) this.readyUp(key);
          else this.log.settled(key);
          this.pump();
          if (this.size === 0) for (const w of this.idleWaiters.splice(0)) w();
        });
      }
    }
  }

  private async send(key: string, event: CloudEvent): Promise<void> {
    for (let backoff = RETRY_MIN_MS; ; backoff = Math.min(backoff * 2, RETRY_MAX_MS)) {
      let status: number | string;
      try {
        status = await this.post(event);
      } catch (err) {
        status = err instanceof Error ? err.message : String(err);
      }
      if (typeof status === "number" && status >= 200 && status < 300) {
        this.counts.sent++;
        return;
      }
      if (typeof status === "number" && !transient(status)) {
        this.counts.refused++;
        this.log.refused({ key, id: event.id, type: event.type, status });
        return;
      }
      this.counts.failedAttempts++;
      // A newer event of the key replaces this one: it is the one to deliver.
      if (this.pending.has(key)) return;
      this.log.retrying({ key, id: event.id, status, retryInMs: backoff });
      await this.sleep(backoff);
      if (this.pending.has(key)) return;
    }
  }
}
