/**
 * The child versions this process's last status run for each DynamoPoolRelay computed from. A
 * child add or update event that carries one of them brings nothing that run did not read, so it
 * is answered without a request: after apply creates the children, their add events arrive when
 * the run for apply's report has read them; an ApiServerSource adapter that restarts (Knative
 * restarts it for every new namespace) sends an add for every child again; a burst of Deployment
 * updates is read once by the run that ends it.
 *
 * Only ever a reason to skip: a delete, a version not seen, or a process that has not run for the
 * key (a new pod) reads everything. A run replaces what it recorded, and only a run that ended
 * without an error records. Bounded: the least recently recorded keys are forgotten first.
 */
export interface ChildVersion {
  kind: string;
  name: string;
  resourceVersion: string;
}

const id = (kind: string, name: string) => `${kind}/${name}`;

/** The versions of the observed children of `kind`s, skipping any without a name or version. */
export function childVersions(observed: readonly { kind: string; objects: readonly unknown[] }[]): ChildVersion[] {
  return observed.flatMap(({ kind, objects }) =>
    objects.flatMap((o) => {
      const { name, resourceVersion } = (o as { metadata?: { name?: unknown; resourceVersion?: unknown } } | undefined)?.metadata ?? {};
      return typeof name === "string" && typeof resourceVersion === "string" ? [{ kind, name, resourceVersion }] : [];
    }),
  );
}

export class SeenVersions {
  private readonly byKey = new Map<string, Map<string, string>>();
  private readonly capacity: number;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  record(key: string, versions: readonly ChildVersion[]): void {
    this.byKey.delete(key);
    this.byKey.set(key, new Map(versions.map((v) => [id(v.kind, v.name), v.resourceVersion])));
    for (const oldest of this.byKey.keys()) {
      if (this.byKey.size <= this.capacity) break;
      this.byKey.delete(oldest);
    }
  }

  forget(key: string): void {
    this.byKey.delete(key);
  }

  has(key: string, version: ChildVersion): boolean {
    return this.byKey.get(key)?.get(id(version.kind, version.name)) === version.resourceVersion;
  }

  get size(): number {
    return this.byKey.size;
  }
}
