/**
 * A workqueue's de-duplication within one process: one run at a time per key, and the callers that
 * arrive while it runs share a single next run, which starts when the current one has ended. Every
 * caller is answered by a run that started after it arrived, so what it asked to be seen is read;
 * a burst of N requests for one key costs at most two runs.
 *
 * A caller may also ask a run to wait for a batch period first (as the EndpointSlice controller
 * batches its updates), so that a burst spread over that period shares one run; a caller that asks
 * for none starts a waiting run at once.
 */
export interface Coalesced<T> {
  value: T;
  /** False when the caller was answered by a run another caller started. */
  ran: boolean;
}

interface Slot<T> {
  /** Settles when the current run (or the current batch period) has ended, whatever its outcome. */
  current: Promise<void>;
  /** The run the callers waiting behind the current one share. */
  queued?: Promise<Coalesced<T>>;
  /** Ends the batch period the queued run waits for, while it waits. */
  endBatch?: () => void;
}

export class Coalescer<T> {
  private readonly slots = new Map<string, Slot<T>>();

  /** @param batch the period to wait before a run starts, when no run is in flight; none: at once */
  run(key: string, task: () => Promise<T>, batch?: () => Promise<void>): Promise<Coalesced<T>> {
    const slot = this.slots.get(key);
    if (!batch) slot?.endBatch?.();
    if (!slot) return batch ? this.batched(key, task, batch) : this.begin(key, task);
    if (slot.queued) return slot.queued.then(({ value }) => ({ value, ran: false }));
    slot.queued = slot.current.then(() => this.begin(key, task));
    return slot.queued;
  }

  /** Settles when the runs for the key in flight or queued now have ended, whatever their outcome. */
  settled(key: string): Promise<void> {
    const slot = this.slots.get(key);
    return slot
      ? (slot.queued ?? slot.current).then(
          () => undefined,
          () => undefined,
        )
      : Promise.resolve();
  }

  /** Keys with a run in flight or queued. */
  get size(): number {
    return this.slots.size;
  }

  /** A run that starts when the batch period has passed, or earlier when a caller asks for none. */
  private batched(key: string, task: () => Promise<T>, batch: () => Promise<void>): Promise<Coalesced<T>> {
    let endBatch!: () => void;
    const current = new Promise<void>((resolve) => {
      endBatch = resolve;
      // A failed timer only ends the wait.
      batch().then(resolve, resolve);
    });
    const slot: Slot<T> = { current, endBatch };
    this.slots.set(key, slot);
    slot.queued = current.then(() => this.begin(key, task));
    return slot.queued;
  }

  private begin(key: string, task: () => Promise<T>): Promise<Coalesced<T>> {
    const running = task();
    const current = running.then(
      () => undefined,
      () => undefined,
    );
    const slot = this.slots.get(key);
    if (slot) {
      slot.current = current;
      delete slot.queued;
      delete slot.endBatch;
    } else this.slots.set(key, { current });
    // Registered before any queued run's start: it sees that run's queue and leaves the slot.
    void current.then(() => {
      const now = this.slots.get(key);
      if (now?.current === current && !now.queued) this.slots.delete(key);
    });
    return running.then((value) => ({ value, ran: true }));
  }
}
