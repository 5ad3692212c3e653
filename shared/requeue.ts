/**
 * The event source's requeue: which DynamoPoolRelays it asks a reconcile for, from what it watches,
 * with no event to go by. A pair is asked for when it is not converged (shared/resync.ts,
 * unconverged: unobserved, settling, blocked), when its status does not show what its DGD makes of
 * it (shared/vouched-status.ts, showsDecision: the DGD's change, or its reconcile request, was lost
 * or lags on the way), or when its children do not carry the decision its status records or would
 * make another status (planStatus, run on what the source keeps of them: a child changed while
 * nobody watched, or whose event was lost); and once it has been quiet long enough (neither it, its
 * DGD nor a child changed, no event of it was delivered, none is waiting to be, and it was not asked
 * for: a pair whose events wait in a burst's backlog is not lost). A converged pair costs nothing.
 */
import { desiredChildren } from "./apply-plan.ts";
import { decideFrom, dgdVerdict, type DecisionSettings, type DgdVerdict } from "./decide.ts";
import { selectorMatches } from "./label-selector.ts";
import { selectionVerdict, type SelectionVerdict } from "./selection.ts";
import { childName } from "./names.ts";
import { unconverged } from "./resync.ts";
import {
  judgedAgainst,
  nameOf,
  shownDigest,
  sliceStandIn,
  slicesOf,
  selectorOf,
  standIn,
  type ChildView,
  type DgdView,
  type DprView,
} from "./source-views.ts";
import { planStatus, type StatusPlanInput } from "./status-plan.ts";
import { recordedDecision, showsDecision } from "./vouched-status.ts";

export type RequeueReason = "Unobserved" | "Blocked" | "Settling" | "DGDNotShown" | "ChildrenOff" | "StatusOff";

/**
 * What the source knows of a pair: its DynamoPoolRelay, its DGD (undefined: none exists) and the
 * children labelled as its; for a DynamoPoolRelay with spec.dgdSelector, every DGD of its namespace
 * (`namespaceDgds`), among which its selector picks.
 */
export interface PairView {
  dpr: DprView;
  dgd: DgdView | undefined;
  children: readonly ChildView[];
  namespaceDgds?: readonly { name: string; view: DgdView }[];
}

/**
 * What the source must read before it can judge a pair: its DGD, kept by version alone (no
 * DynamoPoolRelay paired with it when it was seen); the DGDs of its namespace, some kept without
 * their labels (no selector in the namespace when they were seen: `namespaceDgds`); or children
 * whose intent no decision the source knew when it saw them rendered.
 */
export interface Reread {
  dgd: boolean;
  namespaceDgds?: true;
  children: ChildView[];
}

/**
 * What the pair's DGD, or the DGDs its selector picks, decide, from the source's views; "reread"
 * when a view it needs was kept without what it decides.
 */
export function pairVerdict(pair: PairView, settings: DecisionSettings): DgdVerdict | SelectionVerdict | "reread" {
  const { dpr } = pair;
  if (pair.namespaceDgds) {
    if (pair.namespaceDgds.some((d) => !d.view.selection)) return "reread";
    const selector = selectorOf(dpr);
    const picked = selector
      ? pair.namespaceDgds.filter((d) => selectorMatches(selector, d.view.selection!.labels))
      : [];
    return selectionVerdict(picked.map((d) => ({ name: d.name, verdict: d.view.selection!.verdict })));
  }
  if (pair.dgd && !pair.dgd.verdict) return "reread";
  return pair.dgd?.verdict ?? dgdVerdict(dpr.metadata.name, undefined, settings);
}

/** The longest a pair asked for again and again without changing waits between two requests. */
export const MAX_REQUEUE_MS = 600_000;

/**
 * How long a pair must be quiet before the next request: `afterMs` for the first, then twice as
 * long after each request that changed nothing (a workqueue's per-item backoff), up to
 * MAX_REQUEUE_MS, the resync's period: a burst that keeps pairs settling for minutes is not made
 * heavier by a request a minute for each. Any change of the pair starts it over.
 *
 * @param asked requests since the pair last changed
 */
export function requeueAfterMs(afterMs: number, asked: number): number {
  return Math.min(afterMs * 2 ** Math.min(asked, 16), Math.max(afterMs, MAX_REQUEUE_MS));
}

/** What the source has seen a pair do lately. */
export interface Activity {
  /** When the pair, its DGD or one of its children last changed, an event of it was last delivered, or it was last asked for (ms). */
  since: number;
  /** Its events queued or being sent: until they are delivered, the functions have not seen what they bring. */
  sending: number;
}

/** The transition time the judgment's status is computed with: a status it would write differs in more than its times. */
const JUDGED_AT = "1970-01-01T00:00:00Z";

/** The status a full run would compute from these children, with the plan's verdicts. */
const planOf = (
  dpr: DprView,
  decision: Parameters<typeof planStatus>[0]["decision"],
  observed: StatusPlanInput["observed"],
) => planStatus({ dpr: dpr, decision, observed, changed: [], now: JUDGED_AT });

/**
 * Why a pair would be asked for, from what the source last saw of it, however quiet it is:
 * undefined when it is converged, shows its DGD and its children carry what its status records
 * (which stays so until one of them changes); what to read first when the source cannot tell.
 */
export function requeueReason(pair: PairView, settings: DecisionSettings): RequeueReason | Reread | undefined {
  const { dpr } = pair;
  if (dpr.metadata.deletionTimestamp) return undefined;
  const reason = unconverged(dpr);
  if (reason) return reason;
  const verdict = pairVerdict(pair, settings);
  if (verdict === "reread")
    return pair.namespaceDgds ? { dgd: false, namespaceDgds: true, children: [] } : { dgd: true, children: [] };
  if (!showsDecision(dpr, () => decideFrom(dpr, () => verdict, settings))) return "DGDNotShown";
  const recorded = recordedDecision(dpr, settings);
  // A status that vouches for nothing (a rejected spec) has nothing the children could be off.
  if (!recorded) return undefined;
  const name = childName(dpr.metadata.name);
  const desired = recorded.action === "apply" ? desiredChildren(recorded) : [];
  const viewOf = (kind: string) => pair.children.find((c) => c.kind === kind && nameOf(c, dpr.metadata.name) === name);
  const unjudged = desired.flatMap((d) => {
    const view = viewOf(d.kind);
    return view && judgedAgainst(view, d) === "unjudged" ? [view] : [];
  });
  if (unjudged.length > 0) return { dgd: false, children: unjudged };
  const live = (kind: string) => {
    const view = viewOf(kind);
    return (
      view &&
      standIn(
        view,
        desired.find((d) => d.kind === kind),
      )
    );
  };
  const observed = {
    serviceAccount: live("ServiceAccount"),
    role: live("Role"),
    roleBinding: live("RoleBinding"),
    configMap: live("ConfigMap"),
    deployment: live("Deployment"),
    service: live("Service"),
    endpointSlices: slicesOf(pair.children).map(sliceStandIn),
  };
  const plan = planOf(dpr, recorded, observed);
  if (!plan.reflects) return "ChildrenOff";
  return shownDigest(plan.status) === dpr.shown ? undefined : "StatusOff";
}

/**
 * The share of the quiet period a pair waits when the functions have not acted on what it shows:
 * a generation unobserved, a DGD change its status does not show, children off its decision or
 * its status. The functions act on those within seconds of their event, and the ApiServerSource's one lane of DGD events lags in a burst (in a
 * 1,000-pair burst whose DGDs came after their pairs, 83 of 108 such pairs waited a quiet minute
 * for the requeue). A pair settling or blocked waits on the world (pods starting, a foreign
 * object), and the whole period.
 */
export const PROMPT_SHARE = 4;
const PROMPT: readonly RequeueReason[] = ["Unobserved", "DGDNotShown", "ChildrenOff", "StatusOff"];

/** How often the requeue looks at every pair: a third of the shortest wait, so a due pair waits at most that much more. */
export const requeueTickMs = (requeueMs: number): number => requeueMs / PROMPT_SHARE / 3;

/**
 * The latest a pair found off is asked for after its last change (docs/design.md states it, from
 * this): a reason the functions act on within a quarter of the period, settling or blocked within
 * the whole period; each plus one tick.
 */
export function requeueBoundMs(requeueMs: number): { prompt: number; settling: number } {
  const tick = requeueTickMs(requeueMs);
  return { prompt: requeueMs / PROMPT_SHARE + tick, settling: requeueMs + tick };
}

/** Whether a pair with this reason has been quiet long enough to be asked for (`afterMs`: its backed-off period). */
export function requeueDue(reason: RequeueReason, activity: Activity, now: number, afterMs: number): boolean {
  if (activity.sending > 0) return false;
  const wait = PROMPT.includes(reason) ? afterMs / PROMPT_SHARE : afterMs;
  return now - activity.since >= wait;
}

/** What the requeue does with a pair on a tick. */
export type RequeueAction =
  | { do: "wait" }
  | { do: "judge" }
  | { do: "nothing" }
  | { do: "reread"; what: Reread }
  | { do: "ask"; reason: RequeueReason };

/**
 * The requeue's step for one pair on a tick, from what the source knows of it: a pair busy within
 * the shortest wait of any reason (a quarter of the period) or with events still queued waits and is
 * not even judged; one not judged since its last change is judged first; then nothing for a
 * converged pair, a read for what the judgment could not tell, and a request, by the leader alone,
 * once its reason's wait has passed.
 *
 * @param pair its activity (PairRecord) and its judgment since its last change, if any (null: converged)
 */
export function requeueAction(
  pair: { since: number; asked: number; judged?: RequeueReason | Reread | null },
  state: { sending: number; now: number; requeueMs: number; leading: boolean },
): RequeueAction {
  if (state.now - pair.since < state.requeueMs / PROMPT_SHARE || state.sending > 0) return { do: "wait" };
  if (pair.judged === undefined) return { do: "judge" };
  if (pair.judged === null) return { do: "nothing" };
  if (typeof pair.judged === "object") return { do: "reread", what: pair.judged };
  const due =
    state.leading &&
    requeueDue(
      pair.judged,
      { since: pair.since, sending: state.sending },
      state.now,
      requeueAfterMs(state.requeueMs, pair.asked),
    );
  return due ? { do: "ask", reason: pair.judged } : { do: "wait" };
}
