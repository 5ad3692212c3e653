// One process of bench/kube-client.ts: the apply function's shell (functions/runtime/serve.ts) with
// the product's KubeClient over one variant's connection (./kube-connect.ts), run on reconcile
// requests for one DynamoPoolRelay, in a fresh process so that its first request pays what a cold
// function's does (TLS set-up, the first connection). Prints one JSON line: each invocation's
// answer, time and requests.
//
//   node bench/experiments/kube-sequence.ts VARIANT KUBECONFIG NAMESPACE NAME WARM_RUNS [DEADLINE_S]
import { parseConfig } from "../../shared/config.ts";
import { toBinary, type CloudEvent } from "../../shared/cloudevent.ts";
import { EventType, productEvent } from "../../shared/events.ts";
import { KubeClient } from "../../shared/kube/client.ts";
import { apply } from "../../functions/apply/handler.ts";
import { serve } from "../../functions/runtime/serve.ts";
import { sinkPost } from "../../functions/runtime/sink.ts";
import { connectWith, type Variant } from "./kube-connect.ts";

export interface Invocation {
  cause: string;
  status: number;
  ms: number;
  reads: number;
  writes: number;
  error?: string;
  deadlineExceeded?: boolean;
}

const [variant, kubeconfig, namespace, name, warm, deadline] = process.argv.slice(2) as [
  Variant,
  string,
  string,
  string,
  string,
  string?,
];
const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
let unhandled = 0;
process.on("unhandledRejection", () => void unhandled++);
process.on("uncaughtException", () => void unhandled++);

const started = performance.now();
const kube = connectWith(variant, kubeconfig).then((c) => new KubeClient(c));
const lines: string[] = [];
const config = parseConfig({ ...(deadline ? { INVOCATION_DEADLINE_SECONDS: deadline } : {}) });
const handler = serve("apply", apply, { kube: () => kube, config, now, post: sinkPost({}), log: (l) => lines.push(l) });

async function invoke(event: CloudEvent): Promise<Invocation> {
  const t = performance.now();
  let status = 0;
  const res = {
    status: (code: number) => ((status = code), res),
    set: () => res,
    send: () => undefined,
    end: () => undefined,
  };
  const { headers, body } = toBinary(event);
  await handler({ method: "POST", headers, rawBody: Buffer.from(body) }, res);
  const log = JSON.parse(lines.at(-1)!) as {
    reads: number;
    writes: number;
    error?: string;
    deadlineExceeded?: boolean;
  };
  return {
    cause: (event.data as { cause: string }).cause,
    status,
    ms: performance.now() - t,
    reads: log.reads,
    writes: log.writes,
    ...(log.error ? { error: String(log.error).slice(0, 200) } : {}),
    ...(log.deadlineExceeded ? { deadlineExceeded: true } : {}),
  };
}

const reconcile = (cause: "DGDChanged" | "Resync") =>
  productEvent(
    EventType.Reconcile,
    { namespace, name, cause },
    { source: "/bench/kube-client", cause: "c", time: now() },
  );
const invocations: Invocation[] = [await invoke(reconcile("DGDChanged"))];
for (let i = 0; i < Number(warm); i++) invocations.push(await invoke(reconcile("Resync")));
process.stdout.write(`${JSON.stringify({ invocations, totalMs: performance.now() - started, unhandled })}\n`);
process.exit(0);
