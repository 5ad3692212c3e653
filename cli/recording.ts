/**
 * Recorded events as files hold them: JSON Lines of structured events, a batch array, or one
 * event. Each is read by the strict parser and then checked by the CloudEvents SDK, so whatever
 * `poolrelay replay` reads the SDK can send, and whatever `poolrelay record` writes it wrote.
 */
import { readdirSync, statSync, type Stats } from "node:fs";
import { join } from "node:path";
import { fromStructured, type CloudEvent, type Parsed } from "../shared/cloudevent.ts";
import { InputError, readText } from "./input.ts";
import { toSdk, type SdkEvent } from "./sdk.ts";

function files(path: string): string[] {
  let stat: Stats;
  try {
    stat = statSync(path);
  } catch {
    throw new InputError(`${path}: no such file or folder`);
  }
  if (!stat.isDirectory()) return [path];
  const found = readdirSync(path)
    .filter((f) => /\.(jsonl|json)$/.test(f))
    .sort()
    .map((f) => join(path, f));
  if (found.length === 0) throw new InputError(`${path}: no .jsonl or .json file in this folder`);
  return found;
}

/** One recorded event, accepted by the strict parser and then by the SDK's own validation. */
export function checked(value: unknown): Parsed<{ event: CloudEvent; sdk: SdkEvent<unknown> }> {
  const parsed = fromStructured(value);
  if (!parsed.ok) return parsed;
  const sdk = toSdk(parsed.value);
  return sdk.ok ? { ok: true, value: { event: parsed.value, sdk: sdk.value } } : sdk;
}

export function jsonLine(line: string): Parsed<unknown> {
  try {
    return { ok: true, value: JSON.parse(line) };
  } catch (err) {
    return { ok: false, error: `invalid JSON: ${(err as Error).message}` };
  }
}

/** A file's JSON values and where each is: `file:line` in JSON Lines, `file[index]` in a batch. */
function documents(file: string, problems: string[]): { value: unknown; where: string }[] {
  const text = readText(file);
  const start = text.trimStart();
  if (start.startsWith("[") || (file.endsWith(".json") && start.startsWith("{"))) {
    const parsed = jsonLine(text);
    if (!parsed.ok) {
      // V8 says where: "... (line 3 column 2)".
      const line = /\(line (\d+) column \d+\)/.exec(parsed.error)?.[1];
      problems.push(`${file}${line ? `:${line}` : ""}: ${parsed.error}`);
      return [];
    }
    return Array.isArray(parsed.value)
      ? (parsed.value as unknown[]).map((value, i) => ({ value, where: `${file}[${i}]` }))
      : [{ value: parsed.value, where: file }];
  }
  return text.split("\n").flatMap((line, i) => {
    if (!line.trim()) return [];
    const parsed = jsonLine(line);
    if (parsed.ok) return [{ value: parsed.value, where: `${file}:${i + 1}` }];
    problems.push(`${file}:${i + 1}: ${parsed.error}`);
    return [];
  });
}

const MAX_PROBLEMS = 20;

/**
 * JSON Lines of structured events, a batch (a JSON array, application/cloudevents-batch+json) or
 * one structured event per file. Every problem is reported at once, each naming the file, the line
 * or batch index, the event's id and the attribute, so nothing is sent from a file with a mistake.
 */
export function readEvents(path: string): CloudEvent[] {
  const problems: string[] = [];
  const events = files(path).flatMap((file) =>
    documents(file, problems).flatMap(({ value, where }) => {
      const r = checked(value);
      if (r.ok) return [r.value.event];
      problems.push(`${where}: ${r.error}`);
      return [];
    }),
  );
  if (problems.length > MAX_PROBLEMS)
    problems.splice(MAX_PROBLEMS, Infinity, `... and ${problems.length - MAX_PROBLEMS} more`);
  if (problems.length > 0) throw new InputError(problems.join("\n"));
  return events;
}

/** fetch says only "fetch failed"; the reason is its cause. */
export function unreachable(err: unknown): string {
  const e = err as Error;
  return e.cause instanceof Error ? `${e.message} (${e.cause.message})` : e.message;
}
