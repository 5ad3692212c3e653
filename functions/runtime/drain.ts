/**
 * How a function process stops on SIGTERM: stop listening, answer late requests 503 with
 * Connection: close, and let each request in flight finish within its own deadline.
 */
import type { RequestListener, Server, ServerResponse } from "node:http";

const REFUSAL = JSON.stringify({ error: "this function instance is shutting down: send the event again" });

export class Drain {
  readonly #inFlight = new Set<ServerResponse>();
  #draining = false;
  #settled: (() => void) | undefined;

  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** The listener, with its requests in flight counted; once draining, a new request is refused. */
  admit(listener: RequestListener): RequestListener {
    return (req, res) => {
      if (this.#draining) {
        res
          .writeHead(503, {
            "content-type": "application/json",
            "content-length": Buffer.byteLength(REFUSAL),
            connection: "close",
          })
          .end(REFUSAL);
        return;
      }
      this.#inFlight.add(res);
      // 'close' comes once per response, answered or cut ('finish' would miss a cut connection).
      res.once("close", () => {
        this.#inFlight.delete(res);
        if (this.#draining && this.#inFlight.size === 0) this.#settled?.();
      });
      listener(req, res);
    };
  }

  /** Stops `server` taking work; resolves once every request in flight is answered (or cut). */
  close(server: Server): Promise<void> {
    this.#draining = true;
    // Answers not yet begun say Connection: close, so no client sends another request on them.
    for (const res of this.#inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
    const settled =
      this.#inFlight.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => (this.#settled = resolve));
    server.close();
    server.closeIdleConnections();
    return settled;
  }
}

/** The part of `process` the signal handling uses; tests give their own. */
export interface Signals {
  on(signal: "SIGTERM" | "SIGINT", listener: () => void): unknown;
  exit(code: number): never;
}

/**
 * SIGTERM drains, then exits 0; a second SIGTERM, or SIGINT at any time, exits at once with the
 * shell's code for the signal (143, 130). Handlers must be installed even for the immediate exits:
 * as PID 1 a signal without one is ignored.
 */
export function stopOnSignals(server: Server, drain: Drain, proc: Signals = process): void {
  let draining = false;
  proc.on("SIGINT", () => proc.exit(130));
  proc.on("SIGTERM", () => {
    if (draining) return proc.exit(143);
    draining = true;
    void drain.close(server).then(() => proc.exit(0));
  });
}
