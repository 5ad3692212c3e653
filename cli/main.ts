/**
 * The `poolrelay` command. Each subcommand parses its flags here and calls a module that does the
 * work; exit codes: 0 done, 1 invalid input or failure, 2 usage error.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { DISCOVERY_BACKENDS, type DiscoveryBackend } from "../shared/eligibility.ts";
import { existsSync } from "node:fs";
import { InputError, readObjects } from "./input.ts";
import { render, toJson, toYaml } from "./render.ts";

const USAGE = `Usage:
  poolrelay render -f <file|dir|-> [-f ...] [-o yaml|json] [-n namespace]
                   [--default-discovery-backend kubernetes|etcd] [--now RFC3339]

  poolrelay cluster up [--profile api|full|knative]
  poolrelay cluster down
  poolrelay start [--no-samples]
  poolrelay record -o events.jsonl [--from TAP_URL]
  poolrelay replay <file|dir> --to URL [--mode binary|structured] [--rate N]

Commands:
  render   Print what would be applied for each DynamoPoolRelay in the input (or, for an ineligible
           DynamoGraphDeployment, the Service withdrawal and the status), without a cluster.
  cluster  Start (up) or stop (down) a local control plane on 127.0.0.1: etcd and kube-apiserver
           (profile api), plus controller-manager, scheduler and a kwok fake node (profile full,
           the default), plus the real Knative Eventing (profile knative). Prints the kubeconfig
           to use with kubectl.
  start    Run the whole product locally (npm start): control plane, Knative Eventing, the
           product installed from knative/, and the samples; Ctrl-C stops it all.
  record   Write every event entering the Broker of the running npm start (through a tap
           Trigger), one structured CloudEvent per line.
  replay   Send recorded events (JSON Lines, a batch array or one event) to a URL: a Broker's
           ingress (npm start prints it), or one function.
`;

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
  if (values.output !== "yaml" && values.output !== "json") throw new UsageError(`-o must be yaml or json, got "${values.output}"`);
  const backend = values["default-discovery-backend"];
  if (!(DISCOVERY_BACKENDS as readonly string[]).includes(backend)) {
    throw new UsageError(`--default-discovery-backend must be one of ${DISCOVERY_BACKENDS.join(", ")}, got "${backend}"`);
  }
  const now = values.now ?? new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
  if (Number.isNaN(Date.parse(now))) throw new UsageError(`--now must be an RFC 3339 time, got "${now}"`);
  const objects = readObjects(values.filename, () => readFileSync(0, "utf8"));
  const results = render(objects, { namespace: values.namespace, defaults: { discoveryBackend: backend as DiscoveryBackend }, now });
  if (results.length === 0) process.stderr.write("poolrelay: no DynamoPoolRelay in the input\n");
  return values.output === "json" ? toJson(results) : toYaml(results);
}

async function clusterCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, options: { profile: { type: "string", default: "full" } }, allowPositionals: true, strict: true });
  const out = (s: string) => process.stdout.write(s);
  const err = (s: string) => process.stderr.write(s);
  if (positionals[0] === "up" && positionals.length === 1) {
    if (values.profile !== "api" && values.profile !== "full" && values.profile !== "knative") throw new UsageError(`--profile must be api, full or knative, got "${values.profile}"`);
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

async function recordCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { output: { type: "string", short: "o" }, from: { type: "string" } }, strict: true });
  if (!values.output) throw new UsageError("record needs -o <file>");
  const { startStateFile } = await import("../dev/start.ts");
  const { record } = await import("./replay.ts");
  let tap = values.from;
  if (!tap) {
    if (!existsSync(startStateFile())) throw new UsageError("no npm start is running (its Broker tap is what record reads), or pass --from <tap URL>");
    tap = (JSON.parse(readFileSync(startStateFile(), "utf8")) as { tap: string }).tap;
  }
  const abort = new AbortController();
  process.once("SIGINT", () => abort.abort());
  process.stderr.write(`poolrelay: recording ${tap} to ${values.output}; Ctrl-C stops\n`);
  const n = await record(tap, values.output, abort.signal, (s) => process.stderr.write(s));
  process.stderr.write(`\npoolrelay: ${n} events written to ${values.output}\n`);
}

async function replayCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { to: { type: "string" }, mode: { type: "string", default: "binary" }, rate: { type: "string", default: "0" } },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== 1) throw new UsageError("replay takes one file or folder");
  if (!values.to) throw new UsageError("replay needs --to <url>");
  if (values.mode !== "binary" && values.mode !== "structured") throw new UsageError(`--mode must be binary or structured, got "${values.mode}"`);
  const rate = Number(values.rate);
  if (!Number.isFinite(rate) || rate < 0) throw new UsageError(`--rate must be a number of events per second, got "${values.rate}"`);
  const { readEvents, replay } = await import("./replay.ts");
  const events = readEvents(positionals[0]!);
  const { sent, failed } = await replay(events, { to: values.to, mode: values.mode, rate }, (s) => process.stderr.write(s));
  process.stderr.write(`poolrelay: ${sent - failed} of ${sent} events accepted by ${values.to}\n`);
  return failed > 0 ? 1 : 0;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "render":
        process.stdout.write(renderCommand(rest));
        return 0;
      case "cluster":
        await clusterCommand(rest);
        return 0;
      case "start":
        await startCommand(rest);
        return 0;
      case "record":
        await recordCommand(rest);
        return 0;
      case "replay":
        return await replayCommand(rest);
      case undefined:
      case "help":
      case "--help":
      case "-h":
        process.stdout.write(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (err) {
    if (err instanceof InputError) {
      process.stderr.write(`poolrelay: ${err.message}\n`);
      return 1;
    }
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      process.stderr.write(`poolrelay: ${(err as Error).message}\n\n${USAGE}`);
      return 2;
    }
    throw err;
  }
}
