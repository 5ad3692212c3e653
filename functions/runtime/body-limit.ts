/**
 * The request body limit, decided before the Functions Framework reads a body: its parsers accept
 * up to 1 GB and hold several copies while parsing, far past a function's memory limit.
 */

/**
 * 1 MiB: hundreds of times the largest recorded event (an ApiServerSource event carrying a whole
 * DGD with its managedFields is under 3 KiB: test/fixtures/knative/), and a bounded cost per
 * request (the framework's parsers took 277 MiB of memory for a 13 MiB body).
 */
export const DEFAULT_MAX_EVENT_BYTES = 1024 * 1024;

export interface Refusal {
  status: 413 | 415;
  error: string;
}

/** MAX_EVENT_BYTES, a whole number of bytes; a bad value stops the function at start, not at its first event. */
export function maxEventBytes(env: Record<string, string | undefined>): number {
  const raw = env["MAX_EVENT_BYTES"];
  if (raw === undefined || raw === "") return DEFAULT_MAX_EVENT_BYTES;
  const bytes = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(bytes) || bytes < 1)
    throw new Error(`MAX_EVENT_BYTES must be a whole number of bytes of at least 1, got ${JSON.stringify(raw)}`);
  return bytes;
}

const over = (size: string, limit: number): Refusal => ({
  status: 413,
  error: `request body of ${size} bytes is over the limit of ${limit} bytes (MAX_EVENT_BYTES)`,
});

/** What the headers alone decide, before any of the body is read. */
export function refuseByHeaders(
  headers: { "content-length"?: string; "content-encoding"?: string },
  limit: number,
): Refusal | undefined {
  const encoding = headers["content-encoding"]?.trim().toLowerCase();
  // The framework inflates compressed bodies with no bound of ours on what they expand to.
  if (encoding && encoding !== "identity")
    return {
      status: 415,
      error: `Content-Encoding ${encoding} is not accepted: send the event uncompressed (its size is limited to ${limit} bytes, MAX_EVENT_BYTES)`,
    };
  const declared = headers["content-length"];
  // Node has already refused a Content-Length that is not a number.
  if (declared !== undefined && Number(declared) > limit) return over(declared, limit);
  return undefined;
}

/** For a body without Content-Length: what the bytes `received` so far decide. */
export function refuseReceived(received: number, limit: number): Refusal | undefined {
  return received > limit ? over(`at least ${received}`, limit) : undefined;
}
