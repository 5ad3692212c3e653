/**
 * The reconcile decision for one DynamoPoolRelay: apply its children, withdraw its Service, or
 * leave everything as it is because its own spec is invalid.
 */
import { DynamoPoolRelay } from "./api/dynamo-pool-relay.ts";
import { DynamoGraphDeployment } from "./api/dynamo-graph-deployment.ts";
import { Reason } from "./conditions.ts";
import { connectionRevision } from "./connection-revision.ts";
import {
  dgdEligibility,
  eligibility,
  type Eligibility,
  type IneligibleReason,
  type OperatorDefaults,
} from "./eligibility.ts";
import { formatIssues } from "./issues.ts";
import { DEFAULT_RELAY_COMMAND } from "./relay-env.ts";
import { selectDgds, selectionVerdict, type Excluded, type SelectionVerdict } from "./selection.ts";
import { sourcesDocument, type SourcesDocument } from "./sources-document.ts";
import { workerNamespaces } from "./worker-namespaces.ts";

/**
 * Of a DynamoPoolRelay with spec.dgdSelector: how many DGDs it selects, how many are eligible, and
 * those left out (all of them, or, in a decision made again from the status, the ones it lists).
 */
export interface Selection {
  selected: number;
  eligible: number;
  excluded: Excluded[];
}

export type Decision =
  | {
      action: "apply";
      dpr: DynamoPoolRelay;
      workerNamespaces: string[];
      /** Carried with the revision it went into, so the pods always run the command their revision names. */
      relayCommand: readonly string[];
      connectionRevision: string;
      sources: SourcesDocument;
      selection?: Selection;
    }
  | {
      action: "withdraw";
      dpr: DynamoPoolRelay;
      reason: VerdictReason | typeof Reason.SourcesLimitExceeded;
      message: string;
      selection?: Selection;
    }
  | { action: "reject"; reason: typeof Reason.InvalidSpec; message: string };

/** The operator-wide settings a decision depends on. */
export interface DecisionSettings extends OperatorDefaults {
  /**
   * The Relay container's command (RELAY_COMMAND). Optional so that callers without a function
   * configuration (`poolrelay render`, tests) decide as a default installation does.
   */
  relayCommand?: readonly string[];
}

export function objectKey(obj: { metadata?: { namespace?: string; name?: string } } | undefined): string {
  return `${obj?.metadata?.namespace ?? ""}/${obj?.metadata?.name ?? ""}`;
}

/**
 * What a DGD decides for the DynamoPoolRelay of its name, without the DynamoPoolRelay: the worker
 * namespaces of an eligible one, or why it is not eligible. All a decision needs of the DGD, and
 * what the event source keeps of one (shared/source-views.ts).
 */
export type DgdVerdict =
  { eligible: true; namespaces: string[] } | { eligible: false; reason: VerdictReason; message: string };

/** Why a DGD, or a selection of DGDs (shared/selection.ts), decides no Relay. */
export type VerdictReason =
  IneligibleReason | typeof Reason.InvalidDGD | typeof Reason.NoDGDSelected | typeof Reason.NoEligibleDGD;

/** A DGD as read, judged by `judge` once it parses. */
function verdictOf(rawDgd: unknown, judge: (dgd: DynamoGraphDeployment | undefined) => Eligibility): DgdVerdict {
  let dgd: DynamoGraphDeployment | undefined;
  if (rawDgd !== undefined) {
    const parsedDgd = DynamoGraphDeployment.safeParse(rawDgd);
    if (!parsedDgd.success) {
      return {
        eligible: false,
        reason: Reason.InvalidDGD,
        message: formatIssues(parsedDgd.error, `DynamoGraphDeployment ${objectKey(rawDgd as never)}`),
      };
    }
    dgd = parsedDgd.data;
  }
  const verdict = judge(dgd);
  return verdict.eligible ? { eligible: true, namespaces: workerNamespaces(dgd!) } : verdict;
}

/**
 * @param name the DGD's name, which is its DynamoPoolRelay's
 * @param rawDgd the DGD as read, or undefined when there is none
 */
export function dgdVerdict(name: string, rawDgd: unknown, settings: OperatorDefaults): DgdVerdict {
  return verdictOf(rawDgd, (dgd) => eligibility(name, dgd, settings));
}

/** What a DGD a selector picks decides, whatever its name: its Relay is named after the DynamoPoolRelay. */
export function selectedVerdict(rawDgd: { metadata: { name: string } }, settings: OperatorDefaults): DgdVerdict {
  return verdictOf(rawDgd, (dgd) => dgdEligibility(rawDgd.metadata.name, dgd, settings));
}

/**
 * @param rawDpr the DynamoPoolRelay as read from the API server or a file
 * @param rawDgd the same-named DynamoGraphDeployment, or undefined when there is none
 * @param settings the operator-wide settings (the functions pass their configuration's `defaults`)
 */
export function decide(rawDpr: unknown, rawDgd: unknown, settings: DecisionSettings): Decision {
  return decideFrom(rawDpr, (dpr) => dgdVerdict(dpr.metadata.name, rawDgd, settings), settings);
}

type Named = { metadata: { name: string; labels?: Record<string, string> } };

/**
 * The decision from the DGDs of the DynamoPoolRelay's namespace that were read: those its
 * spec.dgdSelector matches, or, without one, the DGD of its name.
 */
export function decideAmong(rawDpr: unknown, rawDgds: readonly Named[], settings: DecisionSettings): Decision {
  return decideFrom(
    rawDpr,
    (dpr) =>
      dpr.spec.dgdSelector
        ? selectionVerdict(
            selectDgds(dpr.spec.dgdSelector, rawDgds).map((d) => ({
              name: d.metadata.name,
              verdict: selectedVerdict(d, settings),
            })),
          )
        : dgdVerdict(
            dpr.metadata.name,
            rawDgds.find((d) => d.metadata.name === dpr.metadata.name),
            settings,
          ),
    settings,
  );
}

/** The decision, with what the DGD (or the selected DGDs) decide given as a verdict (asked for only of a valid DynamoPoolRelay). */
export function decideFrom(
  rawDpr: unknown,
  dgd: (dpr: DynamoPoolRelay) => DgdVerdict | SelectionVerdict,
  settings: DecisionSettings,
): Decision {
  const parsedDpr = DynamoPoolRelay.safeParse(rawDpr);
  if (!parsedDpr.success) {
    return {
      action: "reject",
      reason: Reason.InvalidSpec,
      message: formatIssues(parsedDpr.error, `DynamoPoolRelay ${objectKey(rawDpr as never)}`),
    };
  }
  const dpr = parsedDpr.data;
  const verdict = dgd(dpr);
  const selection =
    "selected" in verdict
      ? { selection: { selected: verdict.selected, eligible: verdict.eligibleCount, excluded: verdict.excluded } }
      : {};
  if (!verdict.eligible)
    return { action: "withdraw", dpr, reason: verdict.reason, message: verdict.message, ...selection };
  const decision = decideFor(dpr, verdict.namespaces, settings);
  return { ...decision, ...selection };
}

/** The decision for an eligible DGD whose workers register under `namespaces`. */
export function decideFor(
  dpr: DynamoPoolRelay,
  namespaces: string[],
  settings: DecisionSettings,
): Extract<Decision, { action: "apply" | "withdraw" }> {
  const relayCommand = settings.relayCommand ?? DEFAULT_RELAY_COMMAND;
  const revision = connectionRevision(dpr.spec, relayCommand);
  const sources = sourcesDocument(namespaces, revision);
  if (!sources.ok) return { action: "withdraw", dpr, reason: Reason.SourcesLimitExceeded, message: sources.message };
  return {
    action: "apply",
    dpr,
    workerNamespaces: namespaces,
    relayCommand,
    connectionRevision: revision,
    sources: sources.document,
  };
}
