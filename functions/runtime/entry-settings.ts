/**
 * What the entry point serves, from its arguments and environment: the function's name, the file
 * that registers it, the port and the body limit, or the one message that says why it cannot start.
 */
import { parseArgs } from "node:util";
import { maxEventBytes } from "./body-limit.ts";

export interface EntrySettings {
  target: string;
  source: string;
  port: number;
  limit: number;
}

/** --target, --source and --port first, else FUNCTION_TARGET, FUNCTION_SOURCE and PORT (default 8080), as main.js reads them. */
export function entrySettings(
  args: readonly string[],
  env: Record<string, string | undefined>,
): EntrySettings | { error: string } {
  let values: { target?: string | undefined; source?: string | undefined; port?: string | undefined };
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: { target: { type: "string" }, source: { type: "string" }, port: { type: "string" } },
    }));
  } catch (err) {
    return { error: (err as Error).message };
  }
  const target = values.target ?? env["FUNCTION_TARGET"];
  const source = values.source ?? env["FUNCTION_SOURCE"];
  const port = values.port ?? env["PORT"] ?? "8080";
  if (!target || !source)
    return {
      error: "the function to serve is not set: give FUNCTION_TARGET and FUNCTION_SOURCE (or --target and --source)",
    };
  if (!/^\d{1,5}$/.test(port) || Number(port) > 65535)
    return { error: `the port must be a number from 0 to 65535, got ${JSON.stringify(port)}` };
  try {
    return { target, source, port: Number(port), limit: maxEventBytes(env) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}
