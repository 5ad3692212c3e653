/**
 * One kind's list and watch, as client-go's reflector does it, passing each listed object and each
 * watched change to the source's store, which keeps what it needs and tells what changed
 * (shared/source-store.ts): lists come a page at a time and nothing whole is kept here. A watch that
 * ends resumes from the last version seen; one whose version expired (410) lists again, and so
 * does every watch once `relistMs` has passed since its kind's last list (the periodic re-read).
 */
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import { ApiError } from "../../shared/kube/errors.ts";
import type { Change } from "../../shared/source-events.ts";

/** What the informer needs of the Kubernetes client. */
export type Watcher = Pick<KubeClient, "listPages" | "listAndWatch">;

export interface Watch {
  apiVersion: string;
  kind: string;
  labelSelector?: string;
}

export interface InformerEvents {
  /** A list of the kind begins: its objects follow (`listed`), then `ended`. */
  began(kind: string): void;
  /** One object a list found. */
  listed(obj: KubeObject): void;
  /** The list ended: `initial` for the kind's first. */
  ended(info: { kind: string; objects: number; initial: boolean; ms: number }): void;
  /** A watched change, in the order the API server made them per object. */
  change(change: Change, obj: KubeObject): void;
  /** A watch that failed other than by expiring; the informer waits and watches again. */
  failed(info: { kind: string; error: string; retryInMs: number }): void;
}

export interface InformOptions {
  /** How long a kind goes without being listed again (0: only when its watch expired). */
  relistMs: number;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
}

const WATCH_TYPES: Record<string, Change> = { ADDED: "add", MODIFIED: "update", DELETED: "delete" };
const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 30_000;
const WATCH_RENEW_MS = 5 * 60_000;
/** Objects a list page holds: the most the informer has in hand at once. */
export const LIST_PAGE = 250;

/** The object with its kind (a list's items come without it). */
const typed = (obj: KubeObject, watch: Watch): KubeObject => ({
  ...obj,
  apiVersion: watch.apiVersion,
  kind: watch.kind,
});

/** Runs until `signal` aborts. */
export async function inform(
  client: Watcher,
  watch: Watch,
  events: InformerEvents,
  signal: AbortSignal,
  options: InformOptions,
): Promise<void> {
  let version: string | undefined;
  let initial = true;
  let listedAt = 0;
  let backoff = RETRY_MIN_MS;
  while (!signal.aborted) {
    try {
      if (version === undefined || (options.relistMs > 0 && options.now() - listedAt >= options.relistMs)) {
        const started = options.now();
        let objects = 0;
        let listVersion = "";
        events.began(watch.kind);
        for await (const page of client.listPages<KubeObject>(
          watch.apiVersion,
          watch.kind,
          watch.labelSelector,
          LIST_PAGE,
        )) {
          for (const o of page.items) events.listed(typed(o, watch));
          objects += page.items.length;
          listVersion = page.resourceVersion;
        }
        // A list the stop cut short found only some objects: none of the rest is gone.
        if (signal.aborted) return;
        events.ended({ kind: watch.kind, objects, initial, ms: options.now() - started });
        version = listVersion;
        initial = false;
        listedAt = started;
      }
      // A watch is given up and opened again after a while, as client-go's reflector does: a
      // connection that died without a word would otherwise hold it forever.
      const renewIn =
        options.relistMs > 0
          ? Math.min(WATCH_RENEW_MS, Math.max(1, listedAt + options.relistMs - options.now()))
          : WATCH_RENEW_MS;
      const stop = AbortSignal.any([signal, AbortSignal.timeout(renewIn)]);
      version = await client.listAndWatch<KubeObject>(
        watch.apiVersion,
        watch.kind,
        watch.labelSelector,
        (type, obj) => {
          // So that a watch cut after this event resumes after it.
          version = obj.metadata.resourceVersion ?? version;
          events.change(WATCH_TYPES[type]!, typed(obj, watch));
          backoff = RETRY_MIN_MS;
        },
        stop,
        version,
      );
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ApiError && err.status === 410) {
        version = undefined; // expired: list again, and pass on what changed meanwhile
        continue;
      }
      events.failed({ kind: watch.kind, error: err instanceof Error ? err.message : String(err), retryInMs: backoff });
      await options.sleep(backoff);
      backoff = Math.min(backoff * 2, RETRY_MAX_MS);
    }
  }
}
