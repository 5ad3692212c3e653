/**
 * The reconcile decision for one DynamoPoolRelay: apply its children, withdraw its Service, or
 * leave everything as it is because its own spec is invalid.
 */
import { DynamoPoolRelay } from "./api/dynamo-pool-relay.ts";
import { DynamoGraphDeployment } from "./api/dynamo-graph-deployment.ts";
import { Reason } from "./conditions.ts";
import { connectionRevision } from "./connection-revision.ts";
import { eligibility, type IneligibleReason, type OperatorDefaults } from "./eligibility.ts";
import { formatIssues } from "./issues.ts";
import { DEFAULT_RELAY_COMMAND } from "./relay-env.ts";
import { sourcesDocument, type SourcesDocument } from "./sources-document.ts";
import { workerNamespaces } from "./worker-namespaces.ts";

export type Decision =
  | {
      action: "apply";
      dpr: DynamoPoolRelay;
      workerNamespaces: string[];
      /** Carried with the revision it went into, so the pods always run the command their revision names. */
      relayCommand: readonly string[];
      connectionRevision: string;
      sources: SourcesDocument;
    }
  | {
      action: "withdraw";
      dpr: DynamoPoolRelay;
      reason: IneligibleReason | typeof Reason.SourcesLimitExceeded | typeof Reason.InvalidDGD;
      message: string;
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
 * @param rawDpr the DynamoPoolRelay as read from the API server or a file
 * @param rawDgd the same-named DynamoGraphDeployment, or undefined when there is none
 * @param settings the operator-wide settings (the functions pass their configuration's `defaults`)
 */
export function decide(rawDpr: unknown, rawDgd: unknown, settings: DecisionSettings): Decision {
  const parsedDpr = DynamoPoolRelay.safeParse(rawDpr);
  if (!parsedDpr.success) {
    return {
      action: "reject",
      reason: Reason.InvalidSpec,
      message: formatIssues(parsedDpr.error, `DynamoPoolRelay ${objectKey(rawDpr as never)}`),
    };
  }
  const dpr = parsedDpr.data;
  let dgd: DynamoGraphDeployment | undefined;
  if (rawDgd !== undefined) {
    const parsedDgd = DynamoGraphDeployment.safeParse(rawDgd);
    if (!parsedDgd.success) {
      return {
        action: "withdraw",
        dpr,
        reason: Reason.InvalidDGD,
        message: formatIssues(parsedDgd.error, `DynamoGraphDeployment ${objectKey(rawDgd as never)}`),
      };
    }
    dgd = parsedDgd.data;
  }
  const verdict = eligibility(dpr.metadata.name, dgd, settings);
  if (!verdict.eligible) return { action: "withdraw", dpr, reason: verdict.reason, message: verdict.message };

  return decideFor(dpr, workerNamespaces(dgd!), settings);
}

/** The decision for an eligible DGD whose workers register under `namespaces`. */
export function decideFor(dpr: DynamoPoolRelay, namespaces: string[], settings: DecisionSettings): Extract<Decision, { action: "apply" | "withdraw" }> {
  const relayCommand = settings.relayCommand ?? DEFAULT_RELAY_COMMAND;
  const revision = connectionRevision(dpr.spec, relayCommand);
  const sources = sourcesDocument(namespaces, revision);
  if (!sources.ok) return { action: "withdraw", dpr, reason: Reason.SourcesLimitExceeded, message: sources.message };
  return { action: "apply", dpr, workerNamespaces: namespaces, relayCommand, connectionRevision: revision, sources: sources.document };
}
