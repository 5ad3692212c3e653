// Changes lost on the way to the Broker, counted: an independent watch of every object the event
// source sends events about, next to a tap on the Broker (a Trigger without a filter). The watch
// keeps, per object, the last change the source is to send (shared/source-events.ts, sent: not
// the adds of the children apply makes, nor a DynamoPoolRelay's status writes); that change is
// lost when no event about the object at its version or a later one reached the Broker, by itself
// or covered by another event of its pair.
import { compareResourceVersions } from "../shared/resource-version.ts";
import { coveredObjects, type Change } from "../shared/source-events.ts";

export interface Watched {
  kind: string;
  /** `<namespace>/<name>` */
  key: string;
  /** The last version the watch saw that the source is to send, and how it came. */
  resourceVersion: string;
  change: Change;
}

/** What the tap received: per `<kind>/<namespace>/<name>`, the newest resourceVersion an event carried. */
export type Tapped = ReadonlyMap<string, string>;

export function lostChanges(watched: Iterable<Watched>, tapped: Tapped): Watched[] {
  const lost: Watched[] = [];
  for (const w of watched) {
    const got = tapped.get(`${w.kind}/${w.key}`);
    if (got === undefined || (compareResourceVersions(got, w.resourceVersion) ?? -1) < 0) lost.push(w);
  }
  return lost;
}

/**
 * Adds one tapped event to `tapped`, keeping the newest version per object: the change event's
 * object, and each object the event stands for too (its `covers` extension, `Kind/name@version`:
 * shared/source-events.ts, merged).
 */
export function tap(tapped: Map<string, string>, event: { data?: unknown; extensions?: Record<string, string> }): void {
  const { kind, metadata } = (event.data ?? {}) as {
    kind?: string;
    metadata?: { namespace?: string; name?: string; resourceVersion?: string };
  };
  if (!kind || !metadata?.name || !metadata.resourceVersion) return;
  const namespace = metadata.namespace ?? "";
  const seen = (id: string, version: string) => {
    const before = tapped.get(id);
    if (before === undefined || (compareResourceVersions(version, before) ?? 0) > 0) tapped.set(id, version);
  };
  seen(`${kind}/${namespace}/${metadata.name}`, metadata.resourceVersion);
  for (const o of coveredObjects({ extensions: event.extensions ?? {} }))
    seen(`${o.kind}/${namespace}/${o.name}`, o.resourceVersion);
}
