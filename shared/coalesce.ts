/**
 * A workqueue's de-duplication within one process: one run at a time per key, and the callers that
 * arrive while it runs share a single next run, which starts when the current one has ended. Every
 * caller is answered by a run that started after it arrived, so what it asked to be seen is read;
 * a burst of N requests for one key costs at most two runs.
 */
export interface Coalesced<T> {
  value: T;
  /** False when the caller was answered by a run another caller started. */
  ran: boolean;
}

interface Slot<T> {
  /** Settles when the current run has ended, whatever its outcome. */
  current: Promise<void>;
  /** The run the callers waiting behind the current one share. */
  queued?: Promise<Coalesced<T>>;
}

export class Coalescer<T> {
  private readonly slots = new Map<string, Slot<T>>();

  run(key: string, task: () => Promise<T>): Promise<Coalesced<T>> {
    const slot = this.slots.get(key);
    if (!slot) return this.begin(key, task);
    if (slot.queued) return slot.queued.then(({ value }) => ({ value, ran: false }));
    slot.queued = slot.current.then(() => this.begin(key, task));
    return slot.queued;
  }

  /** Keys with a run in flight or queued. */
  get size(): number {
    return this.slots.size;
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
    } else this.slots.set(key, { current });
    // Registered before any queued run's start: it sees that run's queue and leaves the slot.
    void current.then(() => {
      const now = this.slots.get(key);
      if (now?.current === current && !now.queued) this.slots.delete(key);
    });
    return running.then((value) => ({ value, ran: true }));
  }
}
