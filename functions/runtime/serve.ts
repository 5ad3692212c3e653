/**
 * The HTTP shell around a handler: maps every outcome to an answer (a reply event 200, none 204,
 * bad input 4xx, anything else 5xx so the Broker retries), logs one line, and carries the trace.
 */
import type { IncomingHttpHeaders } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { fromHttp, toBinary, type CloudEvent } from "../../shared/cloudevent.ts";
import { parseConfig, type Config, type Program } from "../../shared/config.ts";
import { ApiError } from "../../shared/kube/errors.ts";
import { KubeClient, connect, systemClock, type Clock } from "../../shared/kube/client.ts";
import {
  continueTrace,
  incomingTrace,
  traceAttributes,
  traceLogFields,
  type Span,
} from "../../shared/trace-context.ts";
import { BadEvent, type Context, type Handler } from "./handler.ts";
import { sinkPost, type SinkPost } from "./sink.ts";

interface Request {
  method: string;
  headers: IncomingHttpHeaders;
  rawBody?: Buffer;
  body?: unknown;
}

interface Response {
  status(code: number): Response;
  set(headers: Record<string, string>): Response;
  send(body?: string): unknown;
  end(): unknown;
}

export interface Environment {
  kube: () => Promise<KubeClient>;
  config: Config;
  now: () => string;
  post: SinkPost;
  log: (line: string) => void;
  /** Measures the invocation's deadline; tests give their own. */
  clock?: Clock;
  /** Waits out a batch period; tests give their own. */
  sleep?: (ms: number) => Promise<void>;
}

/** The production environment: credentials from the default chain (in-cluster on Knative), the program's config from process.env. */
export function defaultEnvironment(program: Program): Environment {
  let kube: Promise<KubeClient> | undefined;
  return {
    kube: () => (kube ??= connect(process.env["KUBECONFIG"]).then((c) => new KubeClient(c))),
    config: parseConfig(process.env, program),
    now: () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
    post: sinkPost(process.env),
    log: (line) => process.stdout.write(`${line}\n`),
  };
}

/**
 * What the entry point calls once the server listens (functions/runtime/main.ts): opens the
 * connection to the API server the first event will read over (KubeClient.preconnect).
 */
export function preconnect(env: Environment): () => Promise<void> {
  return () =>
    env.kube().then(
      (kube) => kube.preconnect(),
      () => undefined,
    );
}

/** The event in this invocation's trace, as the Distributed Tracing extension; unchanged without one. */
function traced(event: CloudEvent, span: Span | undefined): CloudEvent {
  return span ? { ...event, extensions: { ...event.extensions, ...traceAttributes(span) } } : event;
}

function emitter(env: Environment, signal: AbortSignal, span: Span | undefined): (event: CloudEvent) => Promise<void> {
  return async (event) => {
    if (!env.config.sink)
      throw new Error("K_SINK is not set: this function cannot emit events (bind it to the Broker with a SinkBinding)");
    if (signal.aborted)
      throw new ApiError(0, "DeadlineExceeded", `event ${event.id} not sent: the invocation's deadline has passed`);
    const binary = toBinary(traced(event, span));
    // A request, unlike a reply, also carries the W3C headers, which the Broker's ingress continues.
    const headers = span ? { ...binary.headers, ...traceAttributes(span) } : binary.headers;
    const { body } = binary;
    // Sink trouble passes with time: answered 503 like any transient failure.
    const status = await env.post(env.config.sink, headers, body, signal).catch((err: Error) => {
      throw new ApiError(0, "SinkUnreachable", `the sink ${env.config.sink} is unreachable: ${err.message}`);
    });
    if (status < 200 || status > 299)
      throw new ApiError(
        status >= 500 ? status : 503,
        "SinkRefused",
        `the sink answered ${status} to event ${event.id}`,
      );
  };
}

function classify(err: unknown): { status: number; message: string; retryAfter?: number } {
  if (err instanceof BadEvent) return { status: err.status, message: err.message };
  if (err instanceof ApiError) {
    return {
      status: err.transient ? 503 : 500,
      message: err.message,
      ...(err.retryAfterSeconds !== undefined ? { retryAfter: err.retryAfterSeconds } : {}),
    };
  }
  return { status: 500, message: err instanceof Error ? err.message : String(err) };
}

/**
 * Every invocation ends by its deadline (INVOCATION_DEADLINE_SECONDS, set below the Knative
 * Service's timeout and the Trigger's delivery timeout): then its requests are cut and no new one
 * is sent, so an invocation the Broker has given up on writes nothing more.
 */
export function serve(name: string, handler: Handler, env: Environment) {
  const clock = env.clock ?? systemClock;
  return async (req: Request, res: Response): Promise<void> => {
    const started = clock.now();
    const log: Record<string, unknown> = { function: name };
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), env.config.deadlineSeconds * 1000);
    let kube: KubeClient | undefined;
    try {
      if (req.method !== "POST") throw new BadEvent(400, `${name} accepts CloudEvents by POST, got ${req.method}`);
      const raw = req.rawBody ?? (typeof req.body === "string" ? Buffer.from(req.body) : Buffer.alloc(0));
      const parsed = fromHttp(req.headers, raw);
      if (!parsed.ok) throw new BadEvent(400, parsed.error);
      const event = parsed.value;
      log["event"] = { id: event.id, type: event.type, source: event.source, subject: event.subject };
      const incoming = incomingTrace(req.headers, event.extensions);
      // Seeded by the event: a redelivery continues the trace with the same span, so its reply is the same.
      const span = incoming && continueTrace(incoming, name, event.source, event.id);
      if (span) Object.assign(log, traceLogFields(span));
      kube = (await env.kube()).fork({
        signal: deadline.signal,
        deadline: started + env.config.deadlineSeconds * 1000,
        clock,
      });
      const ctx: Context = {
        kube,
        config: env.config,
        now: env.now,
        emit: emitter(env, deadline.signal, span),
        sleep: env.sleep ?? sleep,
      };
      const result = await handler(event, ctx);
      log["decision"] = result.decision;
      Object.assign(log, result.fields);
      if (result.reply) {
        // A reply's HTTP headers other than ce-* do not pass the Broker: the trace goes as the extension.
        const { headers, body } = toBinary(traced(result.reply, span));
        // With its own extensions, which a Trigger may route on (statuswritten), not the trace's.
        log["reply"] = { id: result.reply.id, type: result.reply.type, ...result.reply.extensions };
        log["status"] = 200;
        res.status(200).set(headers).send(body);
      } else {
        log["status"] = 204;
        res.status(204).end();
      }
    } catch (err) {
      const { status, message, retryAfter } = classify(err);
      if (err instanceof ApiError && err.reason === "DeadlineExceeded") log["deadlineExceeded"] = true;
      log["status"] = status;
      log["error"] = message;
      res
        .status(status)
        .set({
          "content-type": "application/json",
          ...(retryAfter !== undefined ? { "retry-after": String(retryAfter) } : {}),
        })
        .send(JSON.stringify({ error: message }));
    } finally {
      clearTimeout(timer);
      log["reads"] = kube?.stats.reads ?? 0;
      log["writes"] = kube?.stats.writes ?? 0;
      log["ms"] = Math.round(clock.now() - started);
      if (deadline.signal.aborted) log["deadlineExceeded"] = true;
      env.log(JSON.stringify(log));
    }
  };
}
