/**
 * Knative DeliverySpec semantics: how many retries, the wait before each, the per-attempt
 * timeout, and which answers are retried (5xx, 404, 408, 409, 429, no answer).
 */

export interface Delivery {
  retry?: number;
  backoffPolicy?: "linear" | "exponential";
  backoffDelay?: string;
  timeout?: string;
  deadLetterSink?: unknown;
}

/** ISO-8601 durations as Knative writes them: PT0.2S, PT30S, PT1M. */
export function durationMs(iso: string | undefined): number | undefined {
  if (!iso) return undefined;
  const m = /^PT(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?$/.exec(iso);
  if (!m) throw new Error(`not an ISO-8601 duration: ${iso}`);
  return Math.round(((Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0)) * 60 + Number(m[3] ?? 0)) * 1000);
}

/** Wait before retry n (0-based); missing policy or delay means no wait. */
export function backoffMs(delivery: Delivery, n: number): number {
  const delay = durationMs(delivery.backoffDelay);
  if (delay === undefined || !delivery.backoffPolicy) return 0;
  return delivery.backoffPolicy === "exponential" ? delay * 2 ** n : delay * n;
}

export function retriable(status: number): boolean {
  return status === 0 || status >= 500 || status === 404 || status === 408 || status === 409 || status === 429;
}
