// For tests of concurrent code without timers: run until it stops making progress.

const QUIET_TURNS = 50;

/**
 * Lets the code under test run until it stops making progress: until `progress` (a count of what it
 * started) has stayed the same for many microtask turns, far more than starting one more takes.
 * No timers: nothing here waits for time.
 */
export async function idle(progress: () => number): Promise<void> {
  let last = progress();
  for (let quiet = 0; quiet < QUIET_TURNS;) {
    await Promise.resolve();
    const now = progress();
    quiet = now === last ? quiet + 1 : 0;
    last = now;
  }
}
