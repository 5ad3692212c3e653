/**
 * `poolrelay record`: writes the events a Broker tap delivers (every event entering the Broker) as
 * the CloudEvents SDK serializes them in structured mode, as JSON Lines or one batch array.
 */
import { createWriteStream, openSync } from "node:fs";
import { InputError } from "./input.ts";
import { checked, jsonLine, unreachable } from "./recording.ts";
import { structuredJson } from "./sdk.ts";

async function* lines(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let rest = "";
  for await (const chunk of body) {
    const parts = (rest + decoder.decode(chunk, { stream: true })).split("\n");
    rest = parts.pop()!;
    yield* parts;
  }
  rest += decoder.decode();
  if (rest) yield rest;
}

export type RecordFormat = "jsonl" | "json";

function output(to: string): NodeJS.WritableStream {
  try {
    return createWriteStream(to, { fd: openSync(to, "w") });
  } catch (err) {
    throw new InputError(`${to}: cannot write: ${(err as Error).message}`);
  }
}

/**
 * Writes every event the tap streams to `to` (a file, replaced once the tap answers, or a stream
 * such as stdout) until `signal` aborts or the tap closes, and returns how many. A line that is no
 * valid event is reported, naming the tap, the line and the attribute, and left out.
 */
export async function record(
  tap: string,
  to: string | NodeJS.WritableStream,
  signal: AbortSignal,
  err: (s: string) => void,
  format: RecordFormat = "jsonl",
): Promise<number> {
  const broken = new AbortController();
  const stopped = AbortSignal.any([signal, broken.signal]);
  const res = await fetch(tap, { signal: stopped }).catch((e: unknown) => {
    if (stopped.aborted) return undefined;
    throw new InputError(`cannot read the tap ${tap}: ${unreachable(e)}`);
  });
  if (!res) return 0;
  if (!res.ok || !res.body) throw new InputError(`the tap ${tap} answered ${res.status}`);
  const out = typeof to === "string" ? output(to) : to;
  let writeError: NodeJS.ErrnoException | undefined;
  out.on("error", (e: NodeJS.ErrnoException) => ((writeError = e), broken.abort()));
  let count = 0;
  let line = 0;
  // On stdout the events show themselves; into a file, a count shows progress on one line.
  const toFile = typeof to === "string";
  const note = (s: string) => err(toFile && count > 0 ? `\n${s}` : s);
  if (format === "json") out.write("[");
  try {
    for await (const text of lines(res.body)) {
      line++;
      if (!text.trim()) continue;
      const parsed = jsonLine(text);
      const r = parsed.ok ? checked(parsed.value) : parsed;
      if (!r.ok) {
        note(`poolrelay: ${tap} line ${line}: ${r.error}; not recorded\n`);
        continue;
      }
      const json = structuredJson(r.value.sdk);
      out.write(format === "json" ? `${count > 0 ? "," : ""}\n${json}` : `${json}\n`);
      count++;
      if (toFile) err(`\rpoolrelay: ${count} events recorded`);
    }
  } catch (e) {
    if (!stopped.aborted) throw e;
  } finally {
    if (format === "json") out.write(count > 0 ? "\n]\n" : "]\n");
    if (toFile) await new Promise<void>((r) => out.end(r));
  }
  // A reader that went away (`| head`) ends the recording; any other write failure is one.
  if (writeError && writeError.code !== "EPIPE")
    throw new InputError(`${toFile ? to : "the output"}: cannot write: ${writeError.message}`);
  return count;
}
