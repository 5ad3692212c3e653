/**
 * A DynamoPoolRelay with spec.dgdSelector serves every DGD of its namespace that the selector
 * matches, each judged on its own (decide.ts, dgdVerdict). Their verdicts make one verdict, of the
 * form a single DGD's has, so the rest of the core decides, records and compares a selection as it
 * does one DGD: the union of the eligible DGDs' worker namespaces, or, when none is eligible, why.
 * The DGDs left out are named with their reasons, for the status.
 */
import { compareBytes } from "./bytes.ts";
import { Reason } from "./conditions.ts";
import type { DgdVerdict, VerdictReason } from "./decide.ts";
import { selectorMatches, type LabelSelector } from "./label-selector.ts";

/** A selected DGD that decides no Relay, and why. */
export interface Excluded {
  name: string;
  reason: VerdictReason;
  message: string;
}

export type SelectionVerdict = DgdVerdict & {
  /** How many DGDs the selector matched. */
  selected: number;
  /** How many of them are eligible. */
  eligibleCount: number;
  /** The selected DGDs that are not eligible, by name. */
  excluded: Excluded[];
};

/** Ineligible DGDs a message names one by one; the rest are counted. */
export const NAMED_IN_MESSAGE = 5;
/** Ineligible selected DGDs the status lists (excludedDGDs); the rest are counted. */
export const MAX_EXCLUDED_SHOWN = 16;

interface Labelled {
  metadata: { name: string; labels?: Record<string, string> | undefined };
}

/** The DGDs of a namespace that the selector matches, by name. */
export function selectDgds<T extends Labelled>(selector: LabelSelector, dgds: readonly T[]): T[] {
  return dgds
    .filter((d) => selectorMatches(selector, d.metadata.labels))
    .sort((a, b) => compareBytes(a.metadata.name, b.metadata.name));
}

/** One verdict for the selected DGDs, given each one's. */
export function selectionVerdict(selected: readonly { name: string; verdict: DgdVerdict }[]): SelectionVerdict {
  const sorted = [...selected].sort((a, b) => compareBytes(a.name, b.name));
  const excluded = sorted.flatMap(({ name, verdict }) =>
    verdict.eligible ? [] : [{ name, reason: verdict.reason, message: verdict.message }],
  );
  const namespaces = sorted.flatMap(({ verdict }) => (verdict.eligible ? verdict.namespaces : []));
  const counts = { selected: sorted.length, eligibleCount: sorted.length - excluded.length, excluded };
  if (sorted.length === 0)
    return {
      eligible: false,
      reason: Reason.NoDGDSelected,
      message: "no DynamoGraphDeployment in this namespace matches spec.dgdSelector",
      ...counts,
    };
  if (excluded.length === sorted.length) {
    const named = excluded.slice(0, NAMED_IN_MESSAGE).map((e) => `${e.name} (${e.reason})`);
    const more = excluded.length - named.length;
    return {
      eligible: false,
      reason: Reason.NoEligibleDGD,
      message:
        sorted.length === 1
          ? `the one DynamoGraphDeployment spec.dgdSelector matches is not eligible: ${named[0]!}`
          : `none of the ${sorted.length} DynamoGraphDeployments spec.dgdSelector matches is eligible: ${named.join(", ")}${more > 0 ? ` and ${more} more` : ""}`,
      ...counts,
    };
  }
  return { eligible: true, namespaces: [...new Set(namespaces)].sort(compareBytes), ...counts };
}
