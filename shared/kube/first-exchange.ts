/**
 * One full TLS handshake per server, not one per connection a cold process opens at once: the first
 * request over an agent to a server goes alone, and the requests that come meanwhile wait until its
 * connection has the server's session ticket (or, without one, until it has settled), so their
 * connections resume that session (no certificate chains sent and verified again). A function's
 * first event reads up to nine objects at once, and a cold start is paid on every scale from zero.
 *
 * A server slow to answer the first request does not hold the others once the ticket is there;
 * the wait is bounded by the first request's own timeout, and a waiter's deadline ends it.
 */
export class FirstExchange {
  private readonly gates = new WeakMap<object, Map<string, Promise<void>>>();

  /**
   * For a request over `agent` to `origin`: `ready` settles when it may be sent; `done`, given to
   * the first request only, ends the others' wait: when its connection has the session ticket, and
   * in any case when it has settled (calling it again does nothing).
   */
  enter(agent: object, origin: string): { ready: Promise<void>; done?: () => void } {
    let byOrigin = this.gates.get(agent);
    if (!byOrigin) this.gates.set(agent, (byOrigin = new Map<string, Promise<void>>()));
    const gate = byOrigin.get(origin);
    if (gate) return { ready: gate };
    let done!: () => void;
    byOrigin.set(origin, new Promise<void>((resolve) => (done = resolve)));
    return { ready: Promise.resolve(), done };
  }
}

/** Settles when `ready` does or `signal` aborts, whichever comes first. */
export function untilReadyOrAborted(ready: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return ready;
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const onAbort = () => resolve();
    signal.addEventListener("abort", onAbort, { once: true });
    void ready.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}
