// The status the status function writes once a DynamoPoolRelay's children carry a decision: the
// children as the API server returns them (test/live-children.ts), no EndpointSlice yet.
import { expect } from "vitest";
import { desiredChildren } from "../shared/apply-plan.ts";
import type { DynamoPoolRelay } from "../shared/api/dynamo-pool-relay.ts";
import type { Decision } from "../shared/decide.ts";
import { planStatus } from "../shared/status-plan.ts";
import { appliedHashes, liveChildren } from "./live-children.ts";

export function carriedStatus(dpr: DynamoPoolRelay, decision: Decision, now: string) {
  const live =
    decision.action === "apply"
      ? liveChildren({
          dprUid: dpr.metadata.uid!,
          clusterID: "dc-1",
          connectionRevision: decision.connectionRevision,
          sourcesText: decision.sources.text,
          appliedHash: appliedHashes(desiredChildren(decision)),
        })
      : undefined;
  const observed = {
    serviceAccount: live?.ServiceAccount,
    role: live?.Role,
    roleBinding: live?.RoleBinding,
    configMap: live?.ConfigMap,
    deployment: live?.Deployment,
    service: live?.Service,
    endpointSlices: [],
  };
  const { status, reflects } = planStatus({ dpr, decision, observed, changed: [], now });
  expect(reflects).toBe(true);
  return status;
}
