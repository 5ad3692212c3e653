// An in-memory stand-in for the Kubernetes adapter (shared/kube/client.ts), for handler tests that
// need to see what a handler asked for: every call is recorded, objects are held by
// apiVersion/kind/namespace/name, and any call can be made to fail.
import type { KubeClient, KubeObject, ObjectRef } from "../../shared/kube/client.ts";
import { ApiError } from "../../shared/kube/errors.ts";
import { dprTable } from "../builders.ts";

export type Call =
  | { op: "get"; ref: ObjectRef }
  | { op: "list"; apiVersion: string; kind: string; namespace: string | undefined; labelSelector: string | undefined }
  | { op: "listTablePages"; apiVersion: string; kind: string; limit: number }
  | { op: "apply"; object: KubeObject; fieldManager: string; options: { force?: boolean; dryRun?: boolean } }
  | { op: "create"; object: KubeObject }
  | { op: "deleteExact"; ref: ObjectRef; uid: string }
  | { op: "replaceStatus"; object: KubeObject };

const keyOf = (apiVersion: string, kind: string, namespace: string | undefined, name: string) =>
  `${apiVersion}|${kind}|${namespace ?? ""}|${name}`;

export class FakeKube {
  readonly calls: Call[] = [];
  readonly stats = { reads: 0, writes: 0 };
  private readonly objects = new Map<string, KubeObject>();
  /** The last resourceVersion a write made. */
  private version = 1000;
  /** Answers for `deleteExact`, by default "deleted" (and the object is dropped). */
  deleteAnswer: "deleted" | "gone" = "deleted";
  /** A call for which this returns an error fails with it. */
  failWith: (call: Call) => Error | undefined = () => undefined;

  constructor(objects: readonly KubeObject[] = []) {
    for (const o of objects) this.put(o);
  }

  put(obj: KubeObject): void {
    this.objects.set(keyOf(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name), obj);
  }

  /** The adapter, as the handlers' Context wants it. */
  get client(): KubeClient {
    return this as unknown as KubeClient;
  }

  /**
   * As the adapter's fork for one invocation: once `signal` aborts (its deadline has passed) every
   * call fails unsent, a page of a LIST being read included, and is not recorded. Calls and
   * objects are shared with this fake.
   */
  fork(invocation: { signal?: AbortSignal } = {}): KubeClient {
    const { signal } = invocation;
    if (!signal) return this.client;
    const view = Object.create(this) as FakeKube;
    view.unsent = (what) => {
      if (signal.aborted)
        throw new ApiError(0, "DeadlineExceeded", `${what}: not sent, the invocation's deadline has passed`);
    };
    return view.client;
  }

  /** Throws for a call that is not to be sent (a fork's, past its deadline). */
  private unsent(_what: string): void {}

  /** Kinds read (get, list) before any read of a DynamoPoolRelay had been answered. */
  readonly readBeforeDpr: string[] = [];
  private dprAnswered = false;

  private record(call: Call): void {
    this.unsent(call.op);
    this.calls.push(call);
    if (!this.dprAnswered && (call.op === "get" || call.op === "list")) {
      const kind = call.op === "get" ? call.ref.kind : call.kind;
      if (kind !== "DynamoPoolRelay") this.readBeforeDpr.push(kind);
    }
    if (call.op === "get" || call.op === "list" || call.op === "listTablePages") this.stats.reads++;
    else this.stats.writes++;
    const err = this.failWith(call);
    if (err) throw err;
  }

  ops<T extends Call["op"]>(op: T): Extract<Call, { op: T }>[] {
    return this.calls.filter((c): c is Extract<Call, { op: T }> => c.op === op);
  }

  async get<T = KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    this.record({ op: "get", ref });
    // Answered a turn later, as over a network: reads issued together are all issued before it.
    await Promise.resolve();
    if (ref.kind === "DynamoPoolRelay") this.dprAnswered = true;
    return this.objects.get(keyOf(ref.apiVersion, ref.kind, ref.namespace, ref.name)) as T | undefined;
  }

  async list<T = KubeObject>(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    labelSelector?: string,
  ): Promise<T[]> {
    this.record({ op: "list", apiVersion, kind, namespace, labelSelector });
    return [...this.objects.values()].filter(
      (o) =>
        o.apiVersion === apiVersion &&
        o.kind === kind &&
        (namespace === undefined || o.metadata.namespace === namespace),
    ) as T[];
  }

  async *listTablePages<T = unknown>(apiVersion: string, kind: string, limit: number): AsyncGenerator<T> {
    this.record({ op: "listTablePages", apiVersion, kind, limit });
    const all = [...this.objects.values()].filter((o) => o.apiVersion === apiVersion && o.kind === kind);
    for (let i = 0; i < all.length; i += limit) {
      // Each page after the first is a request of its own.
      if (i > 0) this.unsent("listTablePages");
      yield dprTable(all.slice(i, i + limit)) as Awaited<T>;
    }
  }

  async apply<T = KubeObject>(
    object: KubeObject,
    fieldManager: string,
    options: { force?: boolean; dryRun?: boolean } = {},
  ): Promise<T> {
    this.record({ op: "apply", object, fieldManager, options });
    // A resourceVersion in the applied object is a precondition on an object that exists, as on
    // the API server (v1.36 here: an apply with one creates a missing object).
    const pinned = object.metadata.resourceVersion;
    const stored = this.objects.get(
      keyOf(object.apiVersion, object.kind, object.metadata.namespace, object.metadata.name),
    );
    if (pinned !== undefined && stored && stored.metadata.resourceVersion !== pinned) {
      throw new ApiError(
        409,
        "Conflict",
        `Operation cannot be fulfilled on ${object.kind} ${object.metadata.name}: the object has been modified`,
      );
    }
    // As the API server: every write makes a new resourceVersion, which is what it answers with.
    const written = {
      ...object,
      metadata: { ...object.metadata, uid: `${object.kind}-uid`, resourceVersion: String(++this.version) },
    };
    if (!options.dryRun) this.put(written);
    return written as T;
  }

  async create<T = KubeObject>(object: KubeObject): Promise<T> {
    this.record({ op: "create", object });
    this.put(object);
    return object as T;
  }

  async deleteExact(ref: ObjectRef, uid: string): Promise<"deleted" | "gone"> {
    this.record({ op: "deleteExact", ref, uid });
    if (this.deleteAnswer === "deleted") this.objects.delete(keyOf(ref.apiVersion, ref.kind, ref.namespace, ref.name));
    return this.deleteAnswer;
  }

  async replaceStatus<T = KubeObject>(object: KubeObject): Promise<T> {
    this.record({ op: "replaceStatus", object });
    const stored = this.objects.get(
      keyOf(object.apiVersion, object.kind, object.metadata.namespace, object.metadata.name),
    );
    if (stored && stored.metadata.resourceVersion !== object.metadata.resourceVersion) {
      throw new ApiError(
        409,
        "Conflict",
        `Operation cannot be fulfilled on ${object.kind} ${object.metadata.name}: the object has been modified`,
      );
    }
    const written = { ...object, metadata: { ...object.metadata, resourceVersion: String(++this.version) } };
    this.put(written);
    return written as T;
  }

  /** The object of `kind` as it is held now, after any write. */
  stored(kind: string): KubeObject | undefined {
    return [...this.objects.values()].find((o) => o.kind === kind);
  }
}
