/**
 * The `poolrelay` command. Each subcommand parses its flags here and calls a module that does the
 * work; exit codes: 0 done, 1 invalid input or failure, 2 usage error.
 */
import { existsSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { DISCOVERY_BACKENDS, type DiscoveryBackend } from "../shared/eligibility.ts";
import { InputError, readObjects, readText } from "./input.ts";
import { render, toJson, toYaml } from "./render.ts";
import { COMMANDS, commandUsage, usage, type Command } from "./usage.ts";

class UsageError extends Error {}

function renderCommand(args: string[]): string {
  const { values } = parseArgs({
    args,
    options: {
      filename: { type: "string", short: "f", multiple: true },
      output: { type: "string", short: "o", default: "yaml" },
      namespace: { type: "string", short: "n", default: "default" },
      "default-discovery-backend": { type: "string", default: "kubernetes" },
      now: { type: "string" },
    },
    strict: true,
  });
  if (!values.filename?.length) throw new UsageError("render needs at least one -f <file|dir|->");
  if (values.output !== "yaml" && values.output !== "json")
    throw new UsageError(`-o must be yaml or json, got "${values.output}"`);
  const backend = values["default-discovery-backend"];
  if (!(DISCOVERY_BACKENDS as readonly string[]).includes(backend)) {
    throw new UsageError(
      `--default-discovery-backend must be one of ${DISCOVERY_BACKENDS.join(", ")}, got "${backend}"`,
    );
  }
  const now = values.now ?? new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
  if (Number.isNaN(Date.parse(now))) throw new UsageError(`--now must be an RFC 3339 time, got "${now}"`);
  const objects = readObjects(values.filename, () => readFileSync(0, "utf8"));
  const results = render(objects, {
    namespace: values.namespace,
    defaults: { discoveryBackend: backend as DiscoveryBackend },
    now,
  });
  if (results.length === 0) process.stderr.write("poolrelay: no DynamoPoolRelay in the input\n");
  return values.output === "json" ? toJson(results) : toYaml(results);
}

async function clusterCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: { profile: { type: "string", default: "full" } },
    allowPositionals: true,
    strict: true,
  });
  const out = (s: string) => process.stdout.write(s);
  const err = (s: string) => process.stderr.write(s);
  if (positionals[0] === "up" && positionals.length === 1) {
    if (values.profile !== "api" && values.profile !== "full" && values.profile !== "node")
      throw new UsageError(`--profile must be api, full or node, got "${values.profile}"`);
    const { clusterUp } = await import("./cluster.ts");
    return clusterUp(values.profile, out, err);
  }
  if (positionals[0] === "down" && positionals.length === 1) return (await import("./cluster.ts")).clusterDown(err);
  throw new UsageError("cluster takes up or down");
}

async function startCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { "no-samples": { type: "boolean", default: false } }, strict: true });
  const { start } = await import("../dev/start.ts");
  await start({ samples: !values["no-samples"], out: (l) => process.stdout.write(`${l}\n`) });
}

function httpUrl(flag: string, value: string): string {
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol))
    throw new UsageError(`${flag} must be an http:// or https:// URL, got "${value}"`);
  return value;
}

/** The tap of the running `npm start`, from the state file it writes. */
async function startTap(): Promise<string> {
  const { startStateFile } = await import("../dev/start.ts");
  const file = startStateFile();
  if (!existsSync(file))
    throw new UsageError("no npm start is running (its Broker tap is what record reads), or pass --from <tap URL>");
  const text = readText(file);
  let tap: unknown;
  try {
    tap = (JSON.parse(text) as { tap?: unknown } | null)?.tap;
  } catch (err) {
    throw new InputError(`${file}: invalid JSON: ${(err as Error).message}`);
  }
  if (typeof tap !== "string") throw new InputError(`${file}: tap: expected the tap's URL, got ${JSON.stringify(tap)}`);
  return tap;
}

async function recordCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      "output-file": { type: "string" },
      output: { type: "string", short: "o", default: "jsonl" },
      from: { type: "string" },
    },
    strict: true,
  });
  const format = values.output;
  // -o once named the file: say where the file goes now.
  if (format !== "jsonl" && format !== "json")
    throw new UsageError(`-o must be jsonl or json, got "${format}" (to write to a file: --output-file FILE)`);
  const file = values["output-file"];
  const tap = values.from === undefined ? await startTap() : httpUrl("--from", values.from);
  const { record } = await import("./record.ts");
  const abort = new AbortController();
  process.once("SIGINT", () => abort.abort());
  process.once("SIGTERM", () => abort.abort());
  process.stderr.write(`poolrelay: recording ${tap} to ${file ?? "stdout"}; Ctrl-C stops\n`);
  const n = await record(tap, file ?? process.stdout, abort.signal, (s) => process.stderr.write(s), format);
  process.stderr.write(
    `${file ? "\n" : ""}poolrelay: ${n} events written to ${file ?? "stdout"}${abort.signal.aborted ? "" : " (the tap closed)"}\n`,
  );
}

async function replayCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      to: { type: "string" },
      mode: { type: "string", default: "binary" },
      rate: { type: "string", default: "0" },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== 1) throw new UsageError("replay takes one file or folder");
  if (!values.to) throw new UsageError("replay needs --to <url>");
  const to = httpUrl("--to", values.to);
  if (values.mode !== "binary" && values.mode !== "structured")
    throw new UsageError(`--mode must be binary or structured, got "${values.mode}"`);
  const rate = Number(values.rate);
  if (!Number.isFinite(rate) || rate < 0)
    throw new UsageError(`--rate must be a number of events per second, got "${values.rate}"`);
  const { readEvents, replay } = await import("./replay.ts");
  const events = readEvents(positionals[0]!);
  const { sent, failed } = await replay(events, { to, mode: values.mode, rate }, (s) => process.stderr.write(s));
  process.stderr.write(`poolrelay: ${sent - failed} of ${sent} events accepted by ${to}\n`);
  return failed > 0 ? 1 : 0;
}

async function run(command: Command, args: string[]): Promise<number> {
  switch (command) {
    case "render":
      process.stdout.write(renderCommand(args));
      return 0;
    case "cluster":
      await clusterCommand(args);
      return 0;
    case "start":
      await startCommand(args);
      return 0;
    case "record":
      await recordCommand(args);
      return 0;
    case "replay":
      return replayCommand(args);
  }
}

/**
 * Help wins over every other flag and check, as in kubectl: `poolrelay render -f x --help` only
 * prints help, and `poolrelay start --help` starts nothing.
 */
function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === "--help" || a === "-h");
}

function version(): string {
  return (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
}

export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  const command = (COMMANDS as readonly string[]).includes(first ?? "") ? (first as Command) : undefined;
  try {
    if (command) {
      if (wantsHelp(rest)) return (process.stdout.write(commandUsage(command)), 0);
      return await run(command, rest);
    }
    switch (first) {
      case "--version":
        process.stdout.write(`${version()}\n`);
        return 0;
      case "help":
      case "--help":
      case "-h": {
        const topic = rest[0];
        if (topic === undefined) return (process.stdout.write(usage()), 0);
        if ((COMMANDS as readonly string[]).includes(topic))
          return (process.stdout.write(commandUsage(topic as Command)), 0);
        throw new UsageError(`unknown command "${topic}"`);
      }
      case undefined:
        process.stderr.write(usage());
        return 2;
      default:
        throw new UsageError(`unknown command "${first}"`);
    }
  } catch (err) {
    if (err instanceof InputError) {
      process.stderr.write(`poolrelay: ${err.message}\n`);
      return 1;
    }
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      process.stderr.write(`poolrelay: ${(err as Error).message}\n\n${command ? commandUsage(command) : usage()}`);
      return 2;
    }
    throw err;
  }
}
