/**
 * API errors, classified the way the shell must answer them: a transient failure is retried by
 * the broker (5xx), a permanent one is not (4xx).
 */

export class ApiError extends Error {
  readonly status: number;
  readonly reason: string;
  /** The server's Retry-After, in seconds, when it said when to come back. */
  readonly retryAfterSeconds: number | undefined;
  constructor(status: number, reason: string, message: string, retryAfterSeconds?: number) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.reason = reason;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /** Server trouble, throttling, timeouts and optimistic-concurrency conflicts pass with time. */
  get transient(): boolean {
    return this.status >= 500 || this.status === 429 || this.status === 409 || this.status === 408 || this.status === 0;
  }
}

export function isConflict(err: unknown): boolean {
  return err instanceof ApiError && err.status === 409;
}
