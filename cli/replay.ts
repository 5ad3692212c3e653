/**
 * `poolrelay replay`: sends recorded events again, to a Broker's ingress or one function, in
 * binary or structured mode, at a chosen rate, each as the CloudEvents SDK serializes it.
 */
import type { CloudEvent } from "../shared/cloudevent.ts";
import { unreachable } from "./recording.ts";
import { httpMessage, toSdk } from "./sdk.ts";

// The integration tests record, read and replay through this module.
export { readEvents } from "./recording.ts";
export { record } from "./record.ts";

/** What a refusing target said: the functions answer {"error": "..."}. */
function refusal(status: number, body: string): string {
  let said = body.trim();
  try {
    const error = (JSON.parse(said) as { error?: unknown }).error;
    if (typeof error === "string") said = error;
  } catch {
    // Not JSON: the text as it is.
  }
  return said ? `${status}: ${said.slice(0, 300)}` : String(status);
}

export interface ReplayOptions {
  to: string;
  mode: "binary" | "structured";
  /** Events per second; 0 sends as fast as the target answers. */
  rate: number;
}

/** Time for pacing; the tests give a virtual one. */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const realClock: Clock = { now: () => Date.now(), sleep: (ms) => new Promise((r) => setTimeout(r, ms)) };

/** Sends one event; what went wrong, if anything. */
async function send(event: CloudEvent, options: ReplayOptions): Promise<string | undefined> {
  const sdk = toSdk(event);
  if (!sdk.ok) return sdk.error;
  // Plain fetch with the SDK's message: the SDK's httpTransport resolves without the status code,
  // so a refused event would look sent.
  const { headers, body } = httpMessage(sdk.value, options.mode);
  try {
    const res = await fetch(options.to, { method: "POST", headers, body });
    const text = await res.text();
    return res.ok ? undefined : `${options.to} answered ${refusal(res.status, text)}`;
  } catch (err) {
    return `${options.to}: ${unreachable(err)}`;
  }
}

export async function replay(
  events: readonly CloudEvent[],
  options: ReplayOptions,
  err: (s: string) => void,
  clock: Clock = realClock,
): Promise<{ sent: number; failed: number }> {
  let failed = 0;
  const interval = options.rate > 0 ? 1000 / options.rate : 0;
  const started = clock.now();
  for (const [i, event] of events.entries()) {
    // Event i leaves at i intervals after the first, however long the answers took.
    const wait = started + i * interval - clock.now();
    if (wait > 0) await clock.sleep(wait);
    const problem = await send(event, options);
    if (problem === undefined) continue;
    failed++;
    err(`poolrelay: ${event.type} ${event.id}: ${problem}\n`);
  }
  return { sent: events.length, failed };
}
