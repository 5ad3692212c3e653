/**
 * One kind's list and watch, as client-go's reflector does it, except where Knative's adapter
 * loses changes: when a watch's version has expired (410) and the kind is listed again, every
 * difference from what was last seen is passed on (shared/source-events.ts, relistChanges).
 */
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import { ApiError } from "../../shared/kube/errors.ts";
import { objectKey, relistChanges, type Change } from "../../shared/source-events.ts";

/** What the informer needs of the Kubernetes client. */
export type Watcher = Pick<KubeClient, "listAll" | "listAndWatch">;

export interface Watch {
  apiVersion: string;
  kind: string;
  labelSelector?: string;
}

export interface InformerEvents {
  /** Called for each change, in the order the API server made them per object, with the object as last seen before it. */
  change(change: Change, obj: KubeObject, previous: KubeObject | undefined): void;
  /**
   * Called after each list, with every object listed: the first (`initial`, whose objects are not
   * passed on as changes, as Knative's adapter) and each after an expired watch.
   */
  listed(info: { kind: string; objects: readonly KubeObject[]; changes: number; initial: boolean }): void;
  /** A watch that failed other than by expiring; the informer waits and watches again. */
  failed(info: { kind: string; error: string; retryInMs: number }): void;
}

const WATCH_TYPES: Record<string, Change> = { ADDED: "add", MODIFIED: "update", DELETED: "delete" };
const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 30_000;
const WATCH_RENEW_MS = 5 * 60_000;

/** The object with its kind (a list's items come without it). */
const typed = (obj: KubeObject, watch: Watch): KubeObject => ({ ...obj, apiVersion: watch.apiVersion, kind: watch.kind });

/**
 * What is kept of each object: enough for a delete event, without the managed fields' bulk. The
 * events of adds and updates carry them, as the ApiServerSource's do: status reads the newest
 * entry to tell apply's own writes (shared/last-write.ts).
 */
function kept(obj: KubeObject): KubeObject {
  const { managedFields: _m, ...metadata } = obj.metadata as KubeObject["metadata"] & { managedFields?: unknown };
  return { ...obj, metadata };
}

/**
 * Runs until `signal` aborts. The first list passes nothing on: the objects that exist when the
 * source starts are the resync's (docs/limits.md). A watch that ends (the API server closes watches
 * after a while) resumes from the last version seen; one that expired lists again.
 */
export async function inform(client: Watcher, watch: Watch, events: InformerEvents, signal: AbortSignal, sleep: (ms: number) => Promise<void>): Promise<void> {
  const known = new Map<string, KubeObject>();
  let version: string | undefined;
  let initial = true;
  let backoff = RETRY_MIN_MS;
  while (!signal.aborted) {
    try {
      if (version === undefined) {
        const listed = await client.listAll<KubeObject>(watch.apiVersion, watch.kind, watch.labelSelector);
        const objects = listed.items.map((o) => typed(o, watch));
        const changes = initial ? [] : relistChanges(known, objects).map((c) => ({ ...c, previous: known.get(objectKey(c.obj)) }));
        known.clear();
        for (const o of objects) known.set(objectKey(o), kept(o));
        for (const c of changes) events.change(c.change, c.obj, c.previous);
        events.listed({ kind: watch.kind, objects, changes: changes.length, initial });
        version = listed.resourceVersion;
        initial = false;
      }
      // A watch is given up and opened again after a while, as client-go's reflector does: a
      // connection that died without a word would otherwise hold it forever.
      const stop = AbortSignal.any([signal, AbortSignal.timeout(WATCH_RENEW_MS)]);
      version = await client.listAndWatch<KubeObject>(watch.apiVersion, watch.kind, watch.labelSelector, (type, obj) => {
        const change = WATCH_TYPES[type]!;
        const o = typed(obj, watch);
        // So that a watch cut after this event resumes after it.
        version = o.metadata.resourceVersion ?? version;
        const previous = known.get(objectKey(o));
        if (change === "delete") known.delete(objectKey(o));
        else known.set(objectKey(o), kept(o));
        events.change(change, o, previous);
        backoff = RETRY_MIN_MS;
      }, stop, version);
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ApiError && err.status === 410) {
        version = undefined; // expired: list again, and pass on what changed meanwhile
        continue;
      }
      events.failed({ kind: watch.kind, error: err instanceof Error ? err.message : String(err), retryInMs: backoff });
      await sleep(backoff);
      backoff = Math.min(backoff * 2, RETRY_MAX_MS);
    }
  }
}
