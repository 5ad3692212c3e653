import { describe, expect, it } from "vitest";
import type { CloudEvent } from "./cloudevent.ts";
import { classifyForApply, classifyForEligibility, classifyForStatus } from "./classify.ts";

const ev = (type: string, data: unknown): CloudEvent => ({ specversion: "1.0", id: "1", type, source: "/s", extensions: {}, data });
const obj = (kind: string, labels: Record<string, string> = {}) => ({ apiVersion: "v1", kind, metadata: { name: "x", namespace: "n", labels } });
const managed = { "app.kubernetes.io/managed-by": "dynamo-pool-relay", "app.kubernetes.io/instance": "g1" };

describe("classify", () => {
  it.each([
    { name: "eligibility: a DGD update", got: classifyForEligibility(ev("dev.knative.apiserver.resource.update", { ...obj("DynamoGraphDeployment"), apiVersion: "nvidia.com/v1beta1" })), expected: { ok: true, value: { kind: "dgd", key: { namespace: "n", name: "x" } } } },
    { name: "eligibility: a DynamoPoolRelay add", got: classifyForEligibility(ev("dev.knative.apiserver.resource.add", { ...obj("DynamoPoolRelay"), apiVersion: "nvidia.com/v1alpha1" })), expected: { ok: true, value: { kind: "dpr", key: { namespace: "n", name: "x" } } } },
    { name: "eligibility: a ping", got: classifyForEligibility(ev("dev.knative.sources.ping", undefined)), expected: { ok: true, value: { kind: "resync" } } },
    { name: "eligibility: another kind", got: classifyForEligibility(ev("dev.knative.apiserver.resource.add", obj("Pod"))), expected: { ok: false, status: 422 } },
    { name: "eligibility: another type", got: classifyForEligibility(ev("x", {})), expected: { ok: false, status: 400 } },
    { name: "apply: a reconcile request", got: classifyForApply(ev("com.nvidia.dynamo.poolrelay.reconcile.v1", { namespace: "n", name: "g", cause: "Drift" })), expected: { ok: true, value: { namespace: "n", name: "g", cause: "Drift" } } },
    { name: "apply: bad data", got: classifyForApply(ev("com.nvidia.dynamo.poolrelay.reconcile.v1", { name: "g" })), expected: { ok: false, status: 422 } },
    { name: "status: an applied report", got: classifyForStatus(ev("com.nvidia.dynamo.poolrelay.applied.v1", { namespace: "n", name: "g", uid: "u", generation: 1, applied: [], unchanged: [], skipped: [] })), expected: { ok: true, value: { key: { namespace: "n", name: "g" }, fromChild: false } } },
    { name: "status: a rejected report with an apply failure", got: classifyForStatus(ev("com.nvidia.dynamo.poolrelay.rejected.v1", { namespace: "n", name: "g", uid: "u", generation: 2, reason: "ApplyFailed", message: "m" })), expected: { ok: true, value: { key: { namespace: "n", name: "g" }, fromChild: false, failure: { uid: "u", generation: 2, message: "m" } } } },
    { name: "status: the managed sources ConfigMap", got: classifyForStatus(ev("dev.knative.apiserver.resource.update", obj("ConfigMap", managed))), expected: { ok: true, value: { key: { namespace: "n", name: "g1" }, fromChild: true } } },
    { name: "status: a managed EndpointSlice", got: classifyForStatus(ev("dev.knative.apiserver.resource.update", obj("EndpointSlice", managed))), expected: { ok: true, value: { key: { namespace: "n", name: "g1" }, fromChild: true } } },
    { name: "status: an unmanaged Service", got: classifyForStatus(ev("dev.knative.apiserver.resource.update", obj("Service"))), expected: { ok: false, status: 422 } },
    { name: "status: a reconcile request", got: classifyForStatus(ev("com.nvidia.dynamo.poolrelay.reconcile.v1", {})), expected: { ok: false, status: 400 } },
  ])("$name", ({ got, expected }) => {
    expect(got).toMatchObject(expected);
  });
});
