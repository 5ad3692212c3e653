/**
 * What the event source knows, by pair: each DynamoPoolRelay, the DGD of its name and the children
 * labelled as its, as views (shared/source-views.ts), with what the requeue needs of its recent
 * activity; and, for the DynamoPoolRelays that pick DGDs by label, the DGDs of their namespace,
 * and which of them a DGD's change reaches. Fed by watches and lists; a list tells what changed
 * since the last one, as the source must send it (an add, an update or a delete, with what was
 * known before). No I/O and no clock: times come from the caller.
 */
import { decideFrom, type Decision, type DecisionSettings } from "./decide.ts";
import { selectorMatches, type LabelSelector } from "./label-selector.ts";
import { KIND, LABEL_INSTANCE, LABEL_MANAGED_BY, PRODUCT } from "./names.ts";
import { pairVerdict, type PairView, type RequeueReason, type Reread } from "./requeue.ts";
import type { Change, SentFacts } from "./source-events.ts";
import {
  childView,
  dgdView,
  dprView,
  flat,
  nameOf,
  pairOf,
  selectorOf,
  selects,
  type ChildView,
  type DgdView,
  type DprView,
  type Seen,
} from "./source-views.ts";
import { recordedDecision } from "./vouched-status.ts";

export const DGD_KIND = "DynamoGraphDeployment";
/** Pairs whose decisions are kept made: a burst's pairs in flight, some 15 KiB each with their children rendered. */
const MADE_KEPT = 256;

/** A pair's record: what is known of its objects, and of what happened to it lately. */
export interface PairRecord {
  dpr: DprView | undefined;
  dgd: DgdView | undefined;
  children: ChildView[];
  /** When it, its DGD or a child last changed, an event of it was last delivered, or it was last asked for (ms). */
  since: number;
  /** Requests since it, its DGD or a child last changed. */
  asked: number;
  /**
   * The requeue's judgment (shared/requeue.ts, requeueReason) since its last change: null when
   * converged, undefined when not judged since.
   */
  judged: RequeueReason | Reread | null | undefined;
}

/** What the store knew of an object before a change: a DynamoPoolRelay's or a child's view. */
export type Previous = DprView | ChildView | DgdView | undefined;

/** What `sent` compares of the version kept before a change (shared/source-events.ts). */
export function sentFactsOf(previous: Previous): SentFacts | undefined {
  if (previous === undefined) return undefined;
  if ("metadata" in previous) return { metadata: { generation: previous.metadata.generation } };
  return "kind" in previous ? { digest: previous.more?.digest } : {};
}

/**
 * A change the store took, with the pair it belongs to and the object's view before it; of a DGD,
 * the DynamoPoolRelays whose selector matches it before or after the change (`selectedBy`); of a
 * DynamoPoolRelay with a selector, whether DGDs of its namespace were kept without their labels
 * (no selector there when they were seen), to be read again at once (`rereadDgds`): until they
 * are, a DGD relabelled out of the selector would reach it only through the requeue.
 */
export interface Taken {
  change: Change;
  pair: string;
  previous: Previous;
  selectedBy?: string[];
  rereadDgds?: true;
}

const keyOf = (obj: Pick<Seen, "metadata">) => `${obj.metadata.namespace ?? ""}/${obj.metadata.name}`;
/** The version an object was kept at. */
const versionOf = (previous: Previous): string | undefined =>
  previous === undefined
    ? undefined
    : "metadata" in previous
      ? previous.metadata.resourceVersion
      : previous.resourceVersion;

export class SourceStore {
  private readonly records = new Map<string, PairRecord>();
  /** Objects seen by the list under way, per kind: what it did not list is gone. */
  private readonly listing = new Map<string, Set<string>>();
  private readonly settings: DecisionSettings;
  /** The decisions made for the pairs seen last, with the views they were made from. */
  private readonly made = new Map<string, { dpr: DprView; dgd: DgdView | undefined; decisions: readonly Decision[] }>();
  /** By namespace, the DynamoPoolRelays with spec.dgdSelector (by pair). */
  private readonly selecting = new Map<string, Set<string>>();
  /** By namespace, the names of its DGDs: a selector's candidates. */
  private readonly dgdsIn = new Map<string, Set<string>>();

  constructor(settings: DecisionSettings) {
    this.settings = settings;
  }

  get size(): number {
    return this.records.size;
  }

  /** The pairs with a DynamoPoolRelay, as views. */
  *pairs(): Generator<[string, PairRecord & { dpr: DprView }]> {
    for (const [key, record] of this.records) if (record.dpr) yield [key, record as PairRecord & { dpr: DprView }];
  }

  record(pair: string): PairRecord | undefined {
    return this.records.get(pair);
  }

  view(pair: string): PairView | undefined {
    const r = this.records.get(pair);
    if (!r?.dpr) return undefined;
    const view = { dpr: r.dpr, dgd: r.dgd, children: r.children };
    if (!selects(r.dpr)) return view;
    const namespace = pair.slice(0, pair.indexOf("/"));
    const namespaceDgds = [...(this.dgdsIn.get(namespace) ?? [])].flatMap((name) => {
      const dgd = this.records.get(`${namespace}/${name}`)?.dgd;
      return dgd ? [{ name, view: dgd }] : [];
    });
    return { ...view, namespaceDgds };
  }

  /**
   * The decisions a child of the pair may carry: its status's, then its DGD's (shared/source-views.ts,
   * childView). Made once for each version of the pair's DynamoPoolRelay and DGD, and kept for the
   * pairs seen last: a pair's children change together (a burst, a list of one kind after another).
   */
  decisions(pair: string): readonly Decision[] {
    const r = this.records.get(pair);
    if (!r?.dpr) return [];
    const cached = this.made.get(pair);
    if (cached && cached.dpr === r.dpr && cached.dgd === r.dgd) {
      this.made.delete(pair);
      this.made.set(pair, cached);
      return cached.decisions;
    }
    const recorded = recordedDecision(r.dpr, this.settings);
    // A DGD kept by its version alone decides nothing yet; none at all decides a withdrawal.
    const verdict = pairVerdict(this.view(pair)!, this.settings);
    const current = verdict === "reread" ? undefined : decideFrom(r.dpr, () => verdict, this.settings);
    const decisions = [...(recorded ? [recorded] : []), ...(current ? [current] : [])];
    this.made.set(pair, { dpr: r.dpr, dgd: r.dgd, decisions });
    for (const oldest of this.made.keys()) {
      if (this.made.size <= MADE_KEPT) break;
      this.made.delete(oldest);
    }
    return decisions;
  }

  /**
   * Takes a watched change. Undefined when it brings nothing the store did not know (the same
   * version again) or belongs to no pair (an object labelled as the product's without an instance).
   *
   * @param now when it was seen
   */
  take(change: Change, obj: Seen, now: number): Taken | undefined {
    const pair = obj.kind === KIND || obj.kind === DGD_KIND ? keyOf(obj) : pairOf(obj);
    if (pair === undefined) return undefined;
    this.listing.get(obj.kind)?.add(keyOf(obj));
    const record = this.records.get(pair);
    const previous = record && this.current(record, obj);
    if (change !== "delete" && previous !== undefined && versionOf(previous) === obj.metadata.resourceVersion)
      return undefined;
    if (change === "delete" && previous === undefined) return undefined;
    const r = record ?? this.fresh(pair, now);
    let selectedBy: string[] | undefined;
    if (obj.kind === KIND) this.takeDpr(r, pair, change, obj);
    else if (obj.kind === DGD_KIND) {
      this.takeDgd(r, pair, change, obj);
      selectedBy = this.reselected(pair, previous as DgdView | undefined, r.dgd, now);
    } else this.takeChild(r, pair, change, obj);
    // Quiet from now, judged anew, and the requeue's backoff starts over.
    Object.assign(r, { since: now, asked: 0, judged: undefined });
    this.prune(pair, r);
    const taken: Taken = { change: previous === undefined && change === "update" ? "add" : change, pair, previous };
    if (selectedBy) return { ...taken, selectedBy };
    return obj.kind === KIND && r.dpr && selects(r.dpr) && this.unlabelled(pair)
      ? { ...taken, rereadDgds: true }
      : taken;
  }

  /**
   * An object read again because the store could not judge its pair from what it kept: taken as a
   * change even at the version already known, its view made anew with the decisions known now.
   */
  retake(obj: Seen, now: number): Taken | undefined {
    const pair = obj.kind === KIND || obj.kind === DGD_KIND ? keyOf(obj) : pairOf(obj);
    const r = pair === undefined ? undefined : this.records.get(pair);
    const previous = r && this.current(r, obj);
    if (!r || !previous || versionOf(previous) !== obj.metadata.resourceVersion) return this.take("update", obj, now);
    // The same version: nothing changed in the world, so the pair's activity stays as it was.
    if (obj.kind === DGD_KIND) {
      r.dgd = this.dgdViewOf(obj, r);
      this.reselected(pair!, undefined, undefined, undefined);
    } else if (obj.kind !== KIND) this.takeChild(r, pair!, "update", obj);
    r.judged = undefined;
    return undefined;
  }

  /** An object read again was not found: its delete, if the store knew it. */
  gone(kind: string, namespace: string, name: string, now: number): Taken | undefined {
    const record = this.records.get(kind === KIND || kind === DGD_KIND ? `${namespace}/${name}` : "");
    const obj: Seen = { apiVersion: "", kind, metadata: { name, namespace } };
    if (record || kind === KIND || kind === DGD_KIND) return this.take("delete", obj, now);
    // A child: its pair is the one whose view names it.
    for (const [pair, r] of this.records) {
      const instance = pair.slice(pair.indexOf("/") + 1);
      if (pair.startsWith(`${namespace}/`) && r.children.some((c) => c.kind === kind && nameOf(c, instance) === name)) {
        return this.take(
          "delete",
          {
            ...obj,
            metadata: { ...obj.metadata, labels: { [LABEL_MANAGED_BY]: PRODUCT, [LABEL_INSTANCE]: instance } },
          },
          now,
        );
      }
    }
    return undefined;
  }

  /** A list of `kind` begins: what it does not list by its end is gone (listEnded). */
  listBegan(kind: string): void {
    this.listing.set(kind, new Set());
  }

  /** One object a list found: an add, an update, or nothing new (undefined). */
  listed(obj: Seen, now: number): Taken | undefined {
    return this.take("update", obj, now);
  }

  /** The list of `kind` ended: each object of that kind it did not find, as the delete to pass on, with its view. */
  listEnded(kind: string, apiVersion: string, now: number): { obj: Seen; taken: Taken }[] {
    const found = this.listing.get(kind) ?? new Set<string>();
    this.listing.delete(kind);
    const gone: Seen[] = [];
    for (const [pair, r] of this.records) {
      const [namespace] = pair.split("/");
      if (kind === KIND && r.dpr && !found.has(pair)) gone.push({ apiVersion, kind, metadata: r.dpr.metadata });
      else if (kind === DGD_KIND && r.dgd && !found.has(pair))
        gone.push({
          apiVersion,
          kind,
          metadata: { name: pair.slice(pair.indexOf("/") + 1), namespace, resourceVersion: r.dgd.resourceVersion },
        });
      else {
        const instance = pair.slice(pair.indexOf("/") + 1);
        const labels = { [LABEL_MANAGED_BY]: PRODUCT, [LABEL_INSTANCE]: instance };
        for (const c of r.children) {
          const name = nameOf(c, instance);
          if (c.kind === kind && !found.has(`${namespace}/${name}`))
            gone.push({ apiVersion, kind, metadata: { name, namespace, resourceVersion: c.resourceVersion, labels } });
        }
      }
    }
    return gone.flatMap((obj) => {
      const taken = this.take("delete", obj, now);
      return taken ? [{ obj, taken }] : [];
    });
  }

  /** An event of the pair was delivered, or it was asked for: it is busy until now. */
  active(pair: string, now: number): void {
    const r = this.records.get(pair);
    if (r) r.since = now;
  }

  /** The pair was asked for. */
  asked(pair: string, now: number): void {
    const r = this.records.get(pair);
    if (r) Object.assign(r, { since: now, asked: r.asked + 1 });
  }

  private current(r: PairRecord, obj: Seen): Previous {
    if (obj.kind === KIND) return r.dpr;
    if (obj.kind === DGD_KIND) return r.dgd;
    const pairName = obj.metadata.labels?.[LABEL_INSTANCE] ?? "";
    return r.children.find((c) => c.kind === obj.kind && nameOf(c, pairName) === obj.metadata.name);
  }

  private fresh(pair: string, now: number): PairRecord {
    // Every field from the start: a record keeps one shape (V8 keeps it compact), fields are never deleted.
    const r: PairRecord = { dpr: undefined, dgd: undefined, children: [], since: now, asked: 0, judged: undefined };
    this.records.set(flat(pair), r);
    return r;
  }

  private takeDpr(r: PairRecord, pair: string, change: Change, obj: Seen): void {
    const namespace = pair.slice(0, pair.indexOf("/"));
    const selecting = this.selecting.get(namespace);
    selecting?.delete(pair);
    if (selecting?.size === 0) this.selecting.delete(namespace);
    if (change === "delete") {
      r.dpr = undefined;
      // No pair to judge a DGD for: its version (and what a selector reads) is enough again.
      if (r.dgd) {
        const { resourceVersion, selection } = r.dgd;
        r.dgd = selection ? { resourceVersion, selection } : { resourceVersion };
      }
      return;
    }
    r.dpr = dprView(obj);
    if (selects(r.dpr)) this.selecting.set(namespace, (this.selecting.get(namespace) ?? new Set<string>()).add(pair));
  }

  /** Whether a DGD of the pair's namespace was kept without its labels. */
  private unlabelled(pair: string): boolean {
    const namespace = pair.slice(0, pair.indexOf("/"));
    return [...(this.dgdsIn.get(namespace) ?? [])].some(
      (name) => !this.records.get(`${namespace}/${name}`)?.dgd?.selection,
    );
  }

  /** A DGD's view: what it decides when a DynamoPoolRelay of its name is known, its labels when one of its namespace selects. */
  private dgdViewOf(obj: Seen, r: PairRecord): DgdView {
    return dgdView(obj, r.dpr !== undefined, this.settings, this.selecting.has(obj.metadata.namespace ?? ""));
  }

  private takeDgd(r: PairRecord, pair: string, change: Change, obj: Seen): void {
    const namespace = pair.slice(0, pair.indexOf("/"));
    const names = this.dgdsIn.get(namespace) ?? new Set<string>();
    if (change === "delete") {
      r.dgd = undefined;
      names.delete(obj.metadata.name);
    } else {
      r.dgd = this.dgdViewOf(obj, r);
      names.add(flat(obj.metadata.name));
    }
    if (names.size > 0) this.dgdsIn.set(namespace, names);
    else this.dgdsIn.delete(namespace);
  }

  /**
   * After a DGD's change, the selector DynamoPoolRelays of its namespace: each one's decisions are
   * made again and it is judged anew; those whose selector matches the DGD before or after the change
   * (`before`, `after`: its views) changed, and are quiet from `now`. Without `now` (a DGD read again
   * at the version known), none changed.
   */
  private reselected(
    dgdPair: string,
    before: DgdView | undefined,
    after: DgdView | undefined,
    now: number | undefined,
  ): string[] | undefined {
    const selecting = this.selecting.get(dgdPair.slice(0, dgdPair.indexOf("/")));
    if (!selecting) return undefined;
    const matches = (selector: LabelSelector | undefined, view: DgdView | undefined) =>
      selector !== undefined && view?.selection !== undefined && selectorMatches(selector, view.selection.labels);
    const selectedBy: string[] = [];
    for (const pair of selecting) {
      const r = this.records.get(pair);
      if (!r?.dpr) continue;
      const selector = selectorOf(r.dpr);
      this.made.delete(pair);
      r.judged = undefined;
      if (now === undefined || !(matches(selector, before) || matches(selector, after))) continue;
      Object.assign(r, { since: now, asked: 0 });
      selectedBy.push(pair);
    }
    return selectedBy;
  }

  private takeChild(r: PairRecord, pair: string, change: Change, obj: Seen): void {
    const pairName = pair.slice(pair.indexOf("/") + 1);
    const others = r.children.filter((c) => !(c.kind === obj.kind && nameOf(c, pairName) === obj.metadata.name));
    if (change === "delete") {
      r.children = others;
      return;
    }
    const view = childView(obj, pairName, this.decisions(pair));
    // Its controller is most often the pair's DynamoPoolRelay: one string for both.
    if (view.controller !== undefined && view.controller === r.dpr?.metadata.uid) view.controller = r.dpr.metadata.uid;
    r.children = [...others, view];
  }

  /** A record with nothing left in it is forgotten. */
  private prune(pair: string, r: PairRecord): void {
    if (!r.dpr && !r.dgd && r.children.length === 0) this.records.delete(pair);
  }
}
