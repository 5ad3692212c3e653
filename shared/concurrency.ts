/**
 * Runs an async task per item with at most `limit` in flight. Items are pulled only when a slot is
 * free, so a paged source is read as fast as its items are worked off, never all at once. A failed
 * task does not stop the others: every item is tried and the failures come back with their items.
 */

export interface Settled<T> {
  succeeded: number;
  failures: { item: T; error: unknown }[];
}

export async function settleBounded<T>(
  items: AsyncIterable<T> | Iterable<T>,
  limit: number,
  task: (item: T) => Promise<unknown>,
): Promise<Settled<T>> {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
  const settled: Settled<T> = { succeeded: 0, failures: [] };
  const inFlight = new Set<Promise<void>>();
  try {
    for await (const item of items) {
      if (inFlight.size >= limit) await Promise.race(inFlight);
      // async: a task that throws before returning its promise counts as a failure, not a crash.
      const run: Promise<void> = (async () => task(item))()
        .then(
          () => {
            settled.succeeded++;
          },
          (error: unknown) => {
            settled.failures.push({ item, error });
          },
        )
        .finally(() => inFlight.delete(run));
      inFlight.add(run);
    }
  } finally {
    // A source that fails part-way still lets the tasks already started finish before its error.
    await Promise.all(inFlight);
  }
  return settled;
}
