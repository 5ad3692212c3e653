/**
 * What of each child this process's last status run for a DynamoPoolRelay computed from. A child
 * add or update event whose object is the same in everything status reads, at the very
 * resourceVersion that run read, brings nothing it did not see (a delivery repeated), and is
 * answered without a request. One equal at another version (the Deployment controller rewrites
 * conditions and counts status does not show as the pods start, the EndpointSlice controller
 * addresses and ports) is the same only while the status is still the one that run left
 * (statusAt), which the caller reads: a run elsewhere (another status pod, apply) may have read
 * the child between, as it changed and changed back, and written what it saw then. A version
 * carried over from an earlier run answers only that very version.
 *
 * An event whose object is older than the one the last run read (its resourceVersion is smaller:
 * shared/resource-version.ts) is stale: the adapter delivered it late or out of order, and that run
 * computed the status from something newer.
 *
 * Only ever a reason to skip: a delete, anything status reads that differs in a version that is
 * not older, or a process that has not run for the key (a new pod) reads everything. A run replaces
 * what it recorded of the kinds it read and carries over the rest (SeenVersions.record), and only
 * a run that ended without an error records. Bounded: the least recently recorded keys are
 * forgotten first.
 */
import { stableJson } from "./connection-revision.ts";
import { compareResourceVersions } from "./resource-version.ts";
import { sha256Hex } from "./sources-document.ts";
import { readyEndpoints, rolledOut, type ObservedDeployment } from "./status.ts";

export interface ChildVersion {
  kind: string;
  name: string;
  /** The digest of what status reads of the child (statusDigest). */
  digest: string;
  /** Its metadata.resourceVersion, when it has one. */
  resourceVersion?: string;
}

/**
 * What the last run read of a child, compared with an event's version of it: "same" at that very
 * version, "older", or "equal" in all status reads at another version (the same only if the
 * status is still at statusAt).
 */
export type Seen = "same" | "older" | "equal";

/**
 * What status reads of a child, as a digest: all of it but the server's bookkeeping
 * (resourceVersion, managedFields), except where status shows only a little of what changes most:
 * of a Deployment's status the replica counts it reports and whether a current replica is
 * available (rolledOut), and of an EndpointSlice its ready endpoints (the count is all status
 * shows; the API server bumps an EndpointSlice's generation on every change).
 */
export function statusDigest(kind: string, obj: Record<string, unknown>): string {
  // apiVersion and kind too: a LIST's items come without them, a watch event's object with them.
  const { metadata, status, apiVersion: _av, kind: _k, ...rest } = obj;
  const { resourceVersion: _rv, managedFields: _mf, ...meta } = (metadata ?? {}) as Record<string, unknown>;
  if (kind === "EndpointSlice") {
    const { generation: _g, ...sliceMeta } = meta;
    return sha256Hex(stableJson({ meta: sliceMeta, ready: readyEndpoints([rest]) }));
  }
  if (kind === "Deployment") {
    const counts = (status ?? {}) as NonNullable<ObservedDeployment["status"]>;
    const shown = {
      replicas: counts.replicas,
      readyReplicas: counts.readyReplicas,
      rolledOut: rolledOut(obj as unknown as ObservedDeployment),
    };
    return sha256Hex(stableJson({ meta, rest, shown }));
  }
  return sha256Hex(stableJson({ meta, rest, status }));
}

/** The version of one child object, as an event carries it or a read returns it. */
export function childVersion(kind: string, name: string, obj: Record<string, unknown>): ChildVersion {
  const resourceVersion = (obj["metadata"] as { resourceVersion?: unknown } | undefined)?.resourceVersion;
  return {
    kind,
    name,
    digest: statusDigest(kind, obj),
    ...(typeof resourceVersion === "string" ? { resourceVersion } : {}),
  };
}

/** The versions of the observed children of each kind, skipping absent ones and ones without a name. */
export function childVersions(observed: readonly { kind: string; objects: readonly unknown[] }[]): ChildVersion[] {
  return observed.flatMap(({ kind, objects }) =>
    objects.flatMap((o) => {
      const name = (o as { metadata?: { name?: unknown } } | undefined)?.metadata?.name;
      return typeof name === "string" ? [childVersion(kind, name, o as Record<string, unknown>)] : [];
    }),
  );
}

/** A version recorded for a key, and whether an earlier run than the last one read it (carried over). */
interface Recorded {
  version: ChildVersion;
  carried: boolean;
}

interface KeyRecord {
  versions: Map<string, Recorded>;
  /** The DynamoPoolRelay's resourceVersion with the status the last run left: its write's answer, or what it read when it wrote nothing. */
  statusAt: string | undefined;
}

export class SeenVersions {
  private readonly byKey = new Map<string, KeyRecord>();
  private readonly capacity: number;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  /**
   * @param kinds the kinds the run read. What was recorded of the others is carried over: a run
   * here read it, but runs elsewhere may have read the child since, and it may have changed and
   * changed back, so a carried version answers "same" only for that very version (a duplicate
   * delivery), not for an equal object at a newer version.
   * @param statusAt the DynamoPoolRelay's resourceVersion with the status this run left.
   */
  record(key: string, versions: readonly ChildVersion[], kinds: readonly string[], statusAt: string | undefined): void {
    const carried = [...(this.byKey.get(key)?.versions.values() ?? [])]
      .filter((r) => !kinds.includes(r.version.kind))
      .map((r) => ({ ...r, carried: true }));
    const read = versions.map((version) => ({ version, carried: false }));
    this.byKey.delete(key);
    this.byKey.set(key, {
      versions: new Map([...carried, ...read].map((r) => [`${r.version.kind}/${r.version.name}`, r])),
      statusAt,
    });
    for (const oldest of this.byKey.keys()) {
      if (this.byKey.size <= this.capacity) break;
      this.byKey.delete(oldest);
    }
  }

  forget(key: string): void {
    this.byKey.delete(key);
  }

  /** How this version compares with what a run here read of the child (Seen); undefined: unlike it, or never read. */
  seen(key: string, version: ChildVersion): Seen | undefined {
    const recorded = this.byKey.get(key)?.versions.get(`${version.kind}/${version.name}`);
    if (!recorded) return undefined;
    const { version: read, carried } = recorded;
    const order = compareResourceVersions(version.resourceVersion, read.resourceVersion);
    if (order === -1) return "older";
    if (read.digest !== version.digest) return undefined;
    if (order === 0) return "same";
    return carried ? undefined : "equal";
  }

  /** Whether the DynamoPoolRelay, at this resourceVersion, still has the status the last run here left. */
  unwritten(key: string, resourceVersion: string | undefined): boolean {
    const statusAt = this.byKey.get(key)?.statusAt;
    return statusAt !== undefined && statusAt === resourceVersion;
  }

  get size(): number {
    return this.byKey.size;
  }
}
