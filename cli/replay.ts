/**
 * `poolrelay record` and `poolrelay replay`: capture the events a Broker tap delivers (every event
 * entering the Broker), one structured CloudEvent per line, and send recorded events again, to a
 * Broker's ingress or one function, in binary or structured mode, at a chosen rate.
 */
import { createWriteStream, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fromStructured, toBinary, toStructured, type CloudEvent } from "../shared/cloudevent.ts";
import { InputError } from "./input.ts";

function files(path: string): string[] {
  try {
    return statSync(path).isDirectory() ? readdirSync(path).filter((f) => /\.(jsonl|json)$/.test(f)).sort().map((f) => join(path, f)) : [path];
  } catch {
    throw new InputError(`${path}: no such file or folder`);
  }
}

/** JSON Lines of structured events, a batch (a JSON array, application/cloudevents-batch+json) or one structured event. */
export function readEvents(path: string): CloudEvent[] {
  return files(path).flatMap((file) => {
    const text = readFileSync(file, "utf8");
    const trimmed = text.trim();
    let items: { value: unknown; where: string }[];
    if (trimmed.startsWith("[") || (file.endsWith(".json") && trimmed.startsWith("{"))) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(trimmed);
      } catch (err) {
        throw new InputError(`${file}: invalid JSON: ${(err as Error).message}`);
      }
      items = (Array.isArray(parsed) ? parsed : [parsed]).map((value, i) => ({ value, where: `${file}[${i}]` }));
    } else {
      items = text.split("\n").flatMap((line, i) => {
        if (!line.trim()) return [];
        try {
          return [{ value: JSON.parse(line) as unknown, where: `${file}:${i + 1}` }];
        } catch (err) {
          throw new InputError(`${file}:${i + 1}: invalid JSON: ${(err as Error).message}`);
        }
      });
    }
    return items.map(({ value, where }) => {
      const r = fromStructured(value);
      if (!r.ok) throw new InputError(`${where}: ${r.error}`);
      return r.value;
    });
  });
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

export async function replay(events: readonly CloudEvent[], options: ReplayOptions, err: (s: string) => void, clock: Clock = realClock): Promise<{ sent: number; failed: number }> {
  let failed = 0;
  const interval = options.rate > 0 ? 1000 / options.rate : 0;
  const started = clock.now();
  for (const [i, event] of events.entries()) {
    // Event i leaves at i intervals after the first, however long the answers took.
    const wait = started + i * interval - clock.now();
    if (wait > 0) await clock.sleep(wait);
    const message = options.mode === "binary"
      ? toBinary(event)
      : { headers: { "content-type": "application/cloudevents+json; charset=utf-8" }, body: JSON.stringify(toStructured(event)) };
    try {
      const res = await fetch(options.to, { method: "POST", headers: message.headers, body: message.body });
      await res.arrayBuffer();
      if (!res.ok) {
        failed++;
        err(`poolrelay: ${event.type} ${event.id}: ${options.to} answered ${res.status}\n`);
      }
    } catch (e) {
      failed++;
      err(`poolrelay: ${event.type} ${event.id}: ${(e as Error).message}\n`);
    }
  }
  return { sent: events.length, failed };
}

/** Appends every event from the tap to `file` until `signal` aborts. */
export async function record(tap: string, file: string, signal: AbortSignal, err: (s: string) => void): Promise<number> {
  const out = createWriteStream(file, { flags: "a" });
  let count = 0;
  try {
    const res = await fetch(tap, { signal });
    if (!res.ok || !res.body) throw new InputError(`${tap} answered ${res.status}`);
    const decoder = new TextDecoder();
    for await (const chunk of res.body) {
      const text = decoder.decode(chunk, { stream: true });
      out.write(text);
      count += text.split("\n").length - 1;
      err(`\rpoolrelay: ${count} events recorded`);
    }
  } catch (e) {
    if (!signal.aborted) throw e;
  } finally {
    await new Promise((r) => out.end(r));
  }
  return count;
}
