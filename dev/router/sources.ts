/**
 * Local stand-ins for the Knative sources in knative/: an ApiServerSource that lists and watches
 * exactly the resources (and selectors) the manifest names and emits what the real adapter emits,
 * with its flaws (no events for objects that exist at start, events lost across a relist), and a
 * PingSource that fires on the manifest's schedule.
 */
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { readObjects } from "../yaml.ts";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { SourceEventType } from "../../shared/events.ts";
import { ApiError } from "../../shared/kube/errors.ts";
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import { apiServerEvent, guessPlural } from "./apiserver-events.ts";
import { nextRun, parseSchedule } from "./cron.ts";

const KNATIVE = fileURLToPath(new URL("../../knative/", import.meta.url));
const now = () => new Date().toISOString();

function manifest<T>(file: string, kind: string): T & { metadata: { name: string; namespace: string } } {
  const doc = readObjects(`${KNATIVE}${file}`).find((d) => d.kind === kind) as unknown as (T & { metadata: { name: string; namespace: string } }) | undefined;
  if (!doc) throw new Error(`knative/${file} has no ${kind}`);
  return doc;
}

export interface WatchedResource {
  apiVersion: string;
  kind: string;
  selector?: { matchLabels?: Record<string, string> };
}

export function apiServerSourceResources(): WatchedResource[] {
  return manifest<{ spec: { resources: WatchedResource[] } }>("apiserversource.yaml", "ApiServerSource").spec.resources;
}

function selectorString(r: WatchedResource): string | undefined {
  const labels = Object.entries(r.selector?.matchLabels ?? {});
  return labels.length ? labels.map(([k, v]) => `${k}=${v}`).join(",") : undefined;
}

/**
 * Watches until `signal` aborts. `ready` resolves once every resource has been listed: changes
 * from then on produce events.
 */
export function runApiServerSource(kube: KubeClient, emit: (e: CloudEvent) => void, signal: AbortSignal, log: (l: string) => void): { ready: Promise<void>; done: Promise<void> } {
  // The real adapter guesses each resource from its kind and skips, with a log line, any guess
  // the API server does not serve (a DynamoPoolRelay entry would be skipped so).
  const resources = apiServerSourceResources();
  let listed = 0;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const done = Promise.all(
    resources.map(async (r) => {
      let resume: string | undefined;
      let first = true;
      const served = await kube.resource(r.apiVersion, r.kind).catch(() => undefined);
      if (served?.plural !== guessPlural(r.kind)) {
        log(`resource ${r.apiVersion} ${r.kind} (guessed ${guessPlural(r.kind)}) doesn't exist. skipping`);
        if (++listed === resources.length) markReady();
        return;
      }
      while (!signal.aborted) {
        try {
          resume = await kube.listAndWatch<KubeObject>(r.apiVersion, r.kind, selectorString(r), (type, obj) => {
            emit(apiServerEvent(type, obj, "https://kubernetes.default.svc", randomUUID(), now()));
          }, signal, resume, () => {
            if (first && ++listed === resources.length) markReady();
            first = false;
          });
        } catch (err) {
          // 410 Gone: relist from now on, losing what changed in between, as the real adapter does.
          if (err instanceof ApiError && err.status === 410) resume = undefined;
          else if (!signal.aborted) log(`watch ${r.kind}: ${(err as Error).message}; retrying`);
          await new Promise((res) => setTimeout(res, 1000));
        }
      }
    }),
  ).then(() => undefined);
  return { ready, done };
}

export function pingSource(): { source: string; schedule: string; event: (time: string) => CloudEvent } {
  const ping = manifest<{ spec: { schedule?: string; contentType?: string; data?: string } }>("pingsource.yaml", "PingSource");
  const source = `/apis/v1/namespaces/${ping.metadata.namespace}/pingsources/${ping.metadata.name}`;
  return {
    source,
    schedule: ping.spec.schedule ?? "* * * * *",
    event: (time) => ({
      specversion: "1.0",
      id: randomUUID(),
      type: SourceEventType.Ping,
      source,
      time,
      ...(ping.spec.contentType ? { datacontenttype: ping.spec.contentType } : {}),
      extensions: {},
      data: ping.spec.data === undefined ? undefined : ping.spec.contentType === "application/json" ? JSON.parse(ping.spec.data) : ping.spec.data,
    }),
  };
}

/** Fires on the PingSource's schedule (with its 0-500 ms jitter) until `signal` aborts. */
export async function runPingSource(emit: (e: CloudEvent) => void, signal: AbortSignal): Promise<void> {
  const ping = pingSource();
  const schedule = parseSchedule(ping.schedule);
  while (!signal.aborted) {
    const at = nextRun(schedule, new Date()).getTime() + Math.random() * 500;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, at - Date.now());
      signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
    });
    if (!signal.aborted) emit(ping.event(now()));
  }
}
