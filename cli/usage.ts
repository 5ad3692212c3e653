/**
 * What `poolrelay --help` and `poolrelay <command> --help` print. One table, so the overview and
 * each command's own help cannot disagree about a synopsis.
 */

export const COMMANDS = ["render", "cluster", "start", "record", "replay"] as const;
export type Command = (typeof COMMANDS)[number];

interface Help {
  synopsis: string;
  /** The overview's line. */
  brief: string;
  summary: string;
  options: string;
}

const HELP: Record<Command, Help> = {
  render: {
    brief: "what the product would apply or withdraw for each DynamoPoolRelay, offline",
    synopsis: `poolrelay render -f <file|dir|-> [-f ...] [-o yaml|json] [-n namespace]
                 [--default-discovery-backend kubernetes|etcd] [--now RFC3339]`,
    summary: `Print what would be applied for each DynamoPoolRelay in the input (or, for an ineligible
DynamoGraphDeployment, the Service withdrawal and the status), without a cluster.`,
    options: `  -f, --filename FILE|DIR|-   YAML or JSON objects: a file, a folder of them, or - for stdin; repeatable
  -o, --output yaml|json      output format (default yaml)
  -n, --namespace NAME        namespace of objects that have none (default "default")
      --default-discovery-backend kubernetes|etcd
                              the Dynamo operator's default discovery backend (default kubernetes)
      --now RFC3339           the time written into conditions (default: now)
  -h, --help                  print this help`,
  },
  cluster: {
    brief: "a local control plane in the background, for kubectl",
    synopsis: `poolrelay cluster up [--profile api|full|node]
poolrelay cluster down`,
    summary: `Start (up) or stop (down) a local control plane that keeps running in the background:
etcd and kube-apiserver (profile api), plus controller-manager, scheduler and a kwok fake node
(profile full), plus a real node with Knative Serving and Eventing as pods (profile node, as root).
Prints the kubeconfig to use with kubectl.`,
    options: `      --profile api|full|node   what to run (default full)
  -h, --help                    print this help`,
  },
  start: {
    brief: "the whole product on this machine (npm start)",
    synopsis: "poolrelay start [--no-samples]",
    summary: `Run the whole product locally (npm start): control plane, a real node (needs root) with
Knative Serving and Eventing as pods, the product installed from knative/, and the samples;
Ctrl-C stops it all.`,
    options: `      --no-samples   do not install samples/
  -h, --help         print this help`,
  },
  record: {
    brief: "every event entering the Broker of npm start, to a file or stdout",
    synopsis: "poolrelay record [--output-file FILE] [-o jsonl|json] [--from TAP_URL]",
    summary: `Record every event entering the Broker of the running npm start (through a tap Trigger)
until Ctrl-C, as the CloudEvents SDK writes them in structured mode; poolrelay replay reads both
formats.`,
    options: `      --output-file FILE   write to FILE (replacing it) instead of stdout
  -o, --output jsonl|json  jsonl: JSON Lines, one event per line (default);
                           json: one JSON array, a CloudEvents batch, closed when recording stops
      --from TAP_URL       read another tap (default: the tap of the running npm start)
  -h, --help               print this help`,
  },
  replay: {
    brief: "send recorded events to a Broker or a function",
    synopsis: "poolrelay replay <file|dir> --to URL [--mode binary|structured] [--rate N]",
    summary: `Send recorded events (JSON Lines, a batch array or one event per file; a folder's .jsonl
and .json files in name order) to a URL, a Broker's ingress (npm start prints it) or one function,
through the CloudEvents SDK. Every event is checked before the first is sent. Exits 1 if any is
refused.`,
    options: `      --to URL                    where to POST each event
      --mode binary|structured    HTTP content mode (default binary)
      --rate N                    events per second (default 0: as fast as the target answers)
  -h, --help                      print this help`,
  },
};

/** One command's help. */
export function commandUsage(command: Command): string {
  const { synopsis, summary, options } = HELP[command];
  return `Usage:\n${indent(synopsis)}\n\n${summary}\n\nOptions:\n${options}\n`;
}

/** The overview: every synopsis, and a line per command. */
export function usage(): string {
  const lines = COMMANDS.map((c) => `  ${c.padEnd(8)} ${HELP[c].brief}`);
  return `Usage:\n${COMMANDS.map((c) => indent(HELP[c].synopsis)).join("\n")}
  poolrelay <command> --help
  poolrelay --version

Commands:
${lines.join("\n")}

Exit status: 0 done, 1 invalid input or a failure, 2 a usage error.
`;
}

const indent = (text: string) =>
  text
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n");
