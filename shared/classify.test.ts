import { describe, expect, it } from "vitest";
import type { CloudEvent } from "./cloudevent.ts";
import { classifyForApply, classifyForEligibility, classifyForStatus, mergeStatusInputs } from "./classify.ts";
import { statusDigest } from "./seen-versions.ts";

const ev = (type: string, data: unknown): CloudEvent => ({
  specversion: "1.0",
  id: "1",
  type,
  source: "/s",
  extensions: {},
  data,
});
const obj = (kind: string, labels: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind,
  metadata: { name: "x", namespace: "n", labels },
});
const managed = { "app.kubernetes.io/managed-by": "dynamo-pool-relay", "app.kubernetes.io/instance": "g1" };

describe("classify", () => {
  it.each([
    {
      name: "eligibility: a DGD update",
      got: classifyForEligibility(
        ev("dev.knative.apiserver.resource.update", {
          ...obj("DynamoGraphDeployment"),
          apiVersion: "nvidia.com/v1beta1",
        }),
      ),
      expected: { ok: true, value: { kind: "dgd", key: { namespace: "n", name: "x" } } },
    },
    {
      name: "eligibility: a DynamoPoolRelay add (apply's)",
      got: classifyForEligibility(
        ev("dev.knative.apiserver.resource.add", { ...obj("DynamoPoolRelay"), apiVersion: "nvidia.com/v1alpha1" }),
      ),
      expected: { ok: false, status: 422 },
    },
    {
      name: "eligibility: a ping",
      got: classifyForEligibility(ev("dev.knative.sources.ping", undefined)),
      expected: { ok: true, value: { kind: "resync" } },
    },
    {
      name: "eligibility: another kind",
      got: classifyForEligibility(ev("dev.knative.apiserver.resource.add", obj("Pod"))),
      expected: { ok: false, status: 422 },
    },
    {
      name: "eligibility: another type",
      got: classifyForEligibility(ev("x", {})),
      expected: { ok: false, status: 400 },
    },
    {
      name: "apply: a reconcile request",
      got: classifyForApply(
        ev("com.nvidia.dynamo.poolrelay.reconcile.v1", { namespace: "n", name: "g", cause: "Drift" }),
      ),
      expected: { ok: true, value: { namespace: "n", name: "g", cause: "Drift" } },
    },
    {
      name: "apply: bad data",
      got: classifyForApply(ev("com.nvidia.dynamo.poolrelay.reconcile.v1", { name: "g" })),
      expected: { ok: false, status: 422 },
    },
    {
      name: "apply: a DGD change (eligibility's)",
      got: classifyForApply(
        ev("dev.knative.apiserver.resource.add", { ...obj("DynamoGraphDeployment"), apiVersion: "nvidia.com/v1beta1" }),
      ),
      expected: { ok: false, status: 422 },
    },
    {
      name: "apply: another type",
      got: classifyForApply(ev("com.nvidia.dynamo.poolrelay.applied.v1", {})),
      expected: { ok: false, status: 400 },
    },
    {
      name: "status: an applied report",
      got: classifyForStatus(
        ev("com.nvidia.dynamo.poolrelay.applied.v1", {
          namespace: "n",
          name: "g",
          uid: "u",
          generation: 1,
          applied: [],
          unchanged: [],
          skipped: [],
        }),
      ),
      expected: { ok: true, value: { key: { namespace: "n", name: "g" }, changed: [] } },
    },
    {
      name: "status: an applied report of a status apply wrote",
      got: classifyForStatus(
        ev("com.nvidia.dynamo.poolrelay.applied.v1", {
          namespace: "n",
          name: "g",
          uid: "u",
          generation: 1,
          applied: ["ConfigMap"],
          unchanged: [],
          skipped: [],
          statusWritten: true,
        }),
      ),
      expected: { ok: true, value: { key: { namespace: "n", name: "g" }, changed: [], shownByApply: true } },
    },
    {
      name: "status: a rejected report with an apply failure",
      got: classifyForStatus(
        ev("com.nvidia.dynamo.poolrelay.rejected.v1", {
          namespace: "n",
          name: "g",
          uid: "u",
          generation: 2,
          reason: "ApplyFailed",
          message: "m",
        }),
      ),
      expected: {
        ok: true,
        value: { key: { namespace: "n", name: "g" }, changed: [], failure: { uid: "u", generation: 2, message: "m" } },
      },
    },
    {
      name: "status: the managed sources ConfigMap",
      got: classifyForStatus(ev("dev.knative.apiserver.resource.update", obj("ConfigMap", managed))),
      expected: { ok: true, value: { key: { namespace: "n", name: "g1" }, changed: ["ConfigMap"] } },
    },
    {
      name: "status: the ConfigMap as apply wrote it",
      got: classifyForStatus(
        ev("dev.knative.apiserver.resource.update", {
          ...obj("ConfigMap", managed),
          metadata: {
            ...obj("ConfigMap", managed).metadata,
            managedFields: [{ manager: "dynamo-pool-relay/apply", operation: "Apply", time: "2026-12-01T00:00:00Z" }],
          },
        }),
      ),
      expected: {
        ok: true,
        value: { key: { namespace: "n", name: "g1" }, changed: ["ConfigMap"], awaitsReport: true },
      },
    },
    {
      name: "status: a managed EndpointSlice added with no ready endpoint",
      got: classifyForStatus(
        ev("dev.knative.apiserver.resource.add", {
          ...obj("EndpointSlice", managed),
          endpoints: [{ addresses: ["10.0.0.1"], conditions: { ready: false } }],
        }),
      ),
      expected: {
        ok: true,
        value: { key: { namespace: "n", name: "g1" }, changed: ["EndpointSlice"], addsNoEndpoint: true },
      },
    },
    {
      name: "status: a managed EndpointSlice",
      got: classifyForStatus(ev("dev.knative.apiserver.resource.update", obj("EndpointSlice", managed))),
      expected: { ok: true, value: { key: { namespace: "n", name: "g1" }, changed: ["EndpointSlice"] } },
    },
    {
      name: "status: an unmanaged Service",
      got: classifyForStatus(ev("dev.knative.apiserver.resource.update", obj("Service"))),
      expected: { ok: false, status: 422 },
    },
    {
      name: "status: a reconcile request",
      got: classifyForStatus(ev("com.nvidia.dynamo.poolrelay.reconcile.v1", {})),
      expected: { ok: false, status: 400 },
    },
  ])("$name", ({ got, expected }) => {
    expect(got).toMatchObject(expected);
  });
});

describe("classifyForStatus: an event that stands for other children's changes too (covers)", () => {
  const deployment = {
    ...obj("Deployment", managed),
    apiVersion: "apps/v1",
    metadata: { ...obj("Deployment", managed).metadata, resourceVersion: "6" },
    status: { replicas: 2, readyReplicas: 2 },
  };
  const covering = (covers: string) => ({
    ...ev("dev.knative.apiserver.resource.update", deployment),
    extensions: { covers },
  });

  it("reads for every kind it stands for, with no version or Deployment to take a shortcut by", () => {
    const plain = classifyForStatus(ev("dev.knative.apiserver.resource.update", deployment));
    expect(plain).toMatchObject({ ok: true, value: { changed: ["Deployment"], deployment } });
    expect(plain.ok && plain.value.version).toBeTruthy();
    const got = classifyForStatus(covering("EndpointSlice/x-abcde@5 EndpointSlice/x-fghij@7"));
    expect(got).toEqual({
      ok: true,
      value: { key: { namespace: "n", name: "g1" }, changed: ["Deployment", "EndpointSlice"] },
    });
  });

  it.each([
    { covers: "Pod/p@1", named: "Pod" },
    { covers: "/x@1", named: "kindless object" },
  ])("refuses covers naming $covers with 422, naming the kinds it takes", ({ covers, named }) => {
    expect(classifyForStatus(covering(covers))).toEqual({
      ok: false,
      status: 422,
      error: `extension covers names a ${named}; status handles ConfigMap, Deployment, Service, EndpointSlice`,
    });
  });
});

describe("keys are checked as the API server checks names, before any request", () => {
  const dgd = (namespace: string, name: string) =>
    ev("dev.knative.apiserver.resource.update", {
      apiVersion: "nvidia.com/v1beta1",
      kind: "DynamoGraphDeployment",
      metadata: { namespace, name },
    });
  const reconcile = (namespace: string, name: string) =>
    ev("com.nvidia.dynamo.poolrelay.reconcile.v1", { namespace, name, cause: "Drift" });
  const applied = (namespace: string, name: string) =>
    ev("com.nvidia.dynamo.poolrelay.applied.v1", {
      namespace,
      name,
      uid: "u",
      generation: 1,
      applied: [],
      unchanged: [],
      skipped: [],
    });
  const child = (instance: string) =>
    ev("dev.knative.apiserver.resource.update", obj("Service", { ...managed, "app.kubernetes.io/instance": instance }));
  const hostile = [
    { namespace: "..", name: "." },
    { namespace: "../../etc", name: "passwd" },
    { namespace: "team-a", name: "../../secrets/x" },
    { namespace: "team-a", name: "a/b" },
    { namespace: "Team-A", name: "g1" },
    { namespace: "team-a", name: "G1" },
    { namespace: "a".repeat(64), name: "g1" },
    { namespace: "", name: "g1" },
    { namespace: "team-a", name: "" },
    { namespace: "team-a", name: "g1%2f.." },
  ];

  it.each(hostile)("refuses $namespace / $name with 422 everywhere", ({ namespace, name }) => {
    for (const got of [
      classifyForEligibility(dgd(namespace, name)),
      classifyForApply(reconcile(namespace, name)),
      classifyForStatus(applied(namespace, name)),
    ]) {
      expect(got).toMatchObject({ ok: false, status: 422 });
      expect(got.ok ? "" : got.error).toMatch(/must be (a namespace name|an object name|a DynamoPoolRelay name)/);
    }
  });

  it("accepts the longest names Kubernetes allows", () => {
    const ns = "n".repeat(63);
    const name = `g${"1".repeat(51)}`;
    expect(classifyForApply(reconcile(ns, name))).toMatchObject({ ok: true, value: { namespace: ns, name } });
    expect(classifyForApply(reconcile(ns, `${name}1`))).toMatchObject({ ok: false, status: 422 });
  });

  it("answers a DGD whose name no DynamoPoolRelay can have without reading anything, and a DynamoPoolRelay event so named with 422", () => {
    expect(classifyForEligibility(dgd("team-a", "model.v1"))).toEqual({
      ok: true,
      value: { kind: "unpairable", namespace: "team-a", name: "model.v1" },
    });
    expect(classifyForEligibility(dgd("team-a", `g${"1".repeat(52)}`))).toMatchObject({
      ok: true,
      value: { kind: "unpairable" },
    });
    expect(
      classifyForApply(
        ev("dev.knative.apiserver.resource.add", {
          apiVersion: "nvidia.com/v1alpha1",
          kind: "DynamoPoolRelay",
          metadata: { namespace: "team-a", name: "model.v1" },
        }),
      ),
    ).toMatchObject({ ok: false, status: 422 });
  });

  it("treats a child whose instance label no DynamoPoolRelay can have as not ours", () => {
    expect(classifyForStatus(child("g1"))).toMatchObject({ ok: true });
    expect(classifyForStatus(child("../x"))).toMatchObject({
      ok: false,
      status: 422,
      error: expect.stringMatching(/not managed by dynamo-pool-relay/) as unknown,
    });
  });
});

describe("classifyForEligibility, exactly", () => {
  const dgdObject = {
    apiVersion: "nvidia.com/v1beta1",
    kind: "DynamoGraphDeployment",
    metadata: { namespace: "team-a", name: "g1" },
    spec: { services: {} },
  };

  it.each([
    { name: "an add", type: "dev.knative.apiserver.resource.add" },
    { name: "an update", type: "dev.knative.apiserver.resource.update" },
  ])("keeps the DGD as observed on $name", ({ type }) => {
    expect(classifyForEligibility(ev(type, dgdObject))).toEqual({
      ok: true,
      value: { kind: "dgd", key: { namespace: "team-a", name: "g1" }, observed: dgdObject },
    });
  });

  it("observes nothing on a delete (the payload is the last state, not the current one)", () => {
    expect(classifyForEligibility(ev("dev.knative.apiserver.resource.delete", dgdObject))).toEqual({
      ok: true,
      value: { kind: "dgd", key: { namespace: "team-a", name: "g1" }, observed: undefined },
    });
  });

  it("answers another type with 400, naming the types it handles", () => {
    expect(classifyForEligibility(ev("com.nvidia.dynamo.poolrelay.reconcile.v1", dgdObject))).toEqual({
      ok: false,
      status: 400,
      error:
        "eligibility handles dev.knative.apiserver.resource.add, dev.knative.apiserver.resource.update, dev.knative.apiserver.resource.delete and dev.knative.sources.ping, got type com.nvidia.dynamo.poolrelay.reconcile.v1",
    });
  });
});

describe("each function's change events: the other kind's", () => {
  it.each([
    {
      fn: "eligibility",
      classify: classifyForEligibility,
      apiVersion: "nvidia.com/v1alpha1",
      kind: "DynamoPoolRelay",
      error: "eligibility handles DynamoGraphDeployment change events, got kind DynamoPoolRelay",
    },
    {
      fn: "apply",
      classify: classifyForApply,
      apiVersion: "nvidia.com/v1beta1",
      kind: "DynamoGraphDeployment",
      error: "apply handles DynamoPoolRelay change events, got kind DynamoGraphDeployment",
    },
  ])("$fn answers a $kind change with 422, naming the kind it takes", ({ classify, apiVersion, kind, error }) => {
    expect(
      classify(
        ev("dev.knative.apiserver.resource.add", { apiVersion, kind, metadata: { namespace: "team-a", name: "g1" } }),
      ),
    ).toEqual({ ok: false, status: 422, error });
  });
});

describe("classifyForApply, exactly", () => {
  const dprObject = (metadata: Record<string, unknown> = {}, status?: Record<string, unknown>) => ({
    apiVersion: "nvidia.com/v1alpha1",
    kind: "DynamoPoolRelay",
    metadata: { namespace: "team-a", name: "g1", generation: 3, ...metadata },
    spec: { image: "i", clusterID: "c" },
    ...(status ? { status } : {}),
  });

  it("takes a reconcile request as it is", () => {
    expect(
      classifyForApply(
        ev("com.nvidia.dynamo.poolrelay.reconcile.v1", { namespace: "team-a", name: "g1", cause: "Requeue" }),
      ),
    ).toEqual({ ok: true, value: { namespace: "team-a", name: "g1", cause: "Requeue" } });
  });

  it.each([
    { name: "a new one without status", type: "dev.knative.apiserver.resource.add", object: dprObject() },
    {
      name: "an unobserved generation",
      type: "dev.knative.apiserver.resource.update",
      object: dprObject({}, { observedGeneration: 2 }),
    },
  ])("takes a DynamoPoolRelay change carrying $name as a request of cause DPRChanged", ({ type, object }) => {
    expect(classifyForApply(ev(type, object))).toEqual({
      ok: true,
      value: { namespace: "team-a", name: "g1", cause: "DPRChanged" },
    });
  });

  it.each([
    {
      name: "whose generation is observed",
      type: "dev.knative.apiserver.resource.update",
      object: dprObject({}, { observedGeneration: 3 }),
    },
    {
      name: "being deleted",
      type: "dev.knative.apiserver.resource.update",
      object: dprObject({ deletionTimestamp: "2026-12-01T00:00:00Z" }),
    },
    { name: "deleted", type: "dev.knative.apiserver.resource.delete", object: dprObject() },
  ])("marks a DynamoPoolRelay change $name as observed: nothing to do", ({ type, object }) => {
    expect(classifyForApply(ev(type, object))).toEqual({
      ok: true,
      value: { namespace: "team-a", name: "g1", cause: "DPRChanged", observed: true },
    });
  });

  it("answers a DynamoPoolRelay event whose name no DynamoPoolRelay can have with 422, naming the rule", () => {
    expect(classifyForApply(ev("dev.knative.apiserver.resource.add", dprObject({ name: "model.v1" })))).toEqual({
      ok: false,
      status: 422,
      error:
        "DynamoPoolRelay team-a/model.v1: the name cannot be a DynamoPoolRelay's (a DNS-1035 label of at most 52 characters)",
    });
  });

  it("answers another type with 400, naming the types it handles", () => {
    expect(classifyForApply(ev("com.nvidia.dynamo.poolrelay.applied.v1", {}))).toEqual({
      ok: false,
      status: 400,
      error:
        "apply handles com.nvidia.dynamo.poolrelay.reconcile.v1 and DynamoPoolRelay change events, got type com.nvidia.dynamo.poolrelay.applied.v1",
    });
  });
});

describe("classifyForStatus, exactly", () => {
  const rejected = (reason: string) =>
    ev("com.nvidia.dynamo.poolrelay.rejected.v1", {
      namespace: "n",
      name: "g",
      uid: "u",
      generation: 2,
      reason,
      message: "m",
    });

  it.each([
    {
      name: "an apply failure, with the failure",
      reason: "ApplyFailed",
      value: {
        key: { namespace: "n", name: "g" },
        changed: [],
        report: true,
        failure: { uid: "u", generation: 2, message: "m" },
      },
    },
    {
      name: "an invalid spec, without a failure (status reads the spec itself)",
      reason: "InvalidSpec",
      value: { key: { namespace: "n", name: "g" }, changed: [], report: true },
    },
  ])("takes a rejected report of $name", ({ reason, value }) => {
    expect(classifyForStatus(rejected(reason))).toStrictEqual({ ok: true, value });
  });

  it("takes a withdrawn report as about its DynamoPoolRelay, not a child", () => {
    expect(
      classifyForStatus(
        ev("com.nvidia.dynamo.poolrelay.withdrawn.v1", {
          namespace: "n",
          name: "g",
          uid: "u",
          generation: 1,
          reason: "r",
          message: "m",
          service: "deleted",
        }),
      ),
    ).toStrictEqual({
      ok: true,
      value: { key: { namespace: "n", name: "g" }, changed: [], report: true },
    });
  });

  it("answers another type with 400, naming what it handles", () => {
    expect(classifyForStatus(ev("com.nvidia.dynamo.poolrelay.reconcile.v1", obj("Service", managed)))).toEqual({
      ok: false,
      status: 400,
      error:
        "status handles com.nvidia.dynamo.poolrelay.applied.v1, com.nvidia.dynamo.poolrelay.withdrawn.v1, com.nvidia.dynamo.poolrelay.rejected.v1 and child resource events, got type com.nvidia.dynamo.poolrelay.reconcile.v1",
    });
  });

  it("answers another kind with 422, naming the kinds it handles", () => {
    expect(classifyForStatus(ev("dev.knative.apiserver.resource.update", obj("Pod", managed)))).toEqual({
      ok: false,
      status: 422,
      error: "status handles ConfigMap, Deployment, Service, EndpointSlice events, got kind Pod",
    });
  });
});

describe("status input", () => {
  const child = (type: string, resourceVersion?: string) =>
    classifyForStatus(
      ev(type, {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: {
          name: "g1-pool-relay",
          namespace: "n",
          labels: managed,
          ...(resourceVersion ? { resourceVersion } : {}),
        },
      }),
    );

  it("carries what status reads of an added or updated child, and the Deployment itself, as hints, and nothing for a deleted one", () => {
    const object = (resourceVersion?: string) => ({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: {
        name: "g1-pool-relay",
        namespace: "n",
        labels: managed,
        ...(resourceVersion ? { resourceVersion } : {}),
      },
    });
    const version = { kind: "Deployment", name: "g1-pool-relay", digest: statusDigest("Deployment", object("42")) };
    expect(child("dev.knative.apiserver.resource.add", "42")).toStrictEqual({
      ok: true,
      value: {
        key: { namespace: "n", name: "g1" },
        changed: ["Deployment"],
        version: { ...version, resourceVersion: "42" },
        deployment: object("42"),
      },
    });
    expect(child("dev.knative.apiserver.resource.update", "43")).toStrictEqual({
      ok: true,
      value: {
        key: { namespace: "n", name: "g1" },
        changed: ["Deployment"],
        version: { ...version, resourceVersion: "43" },
        deployment: object("43"),
      },
    });
    expect(child("dev.knative.apiserver.resource.update")).toStrictEqual({
      ok: true,
      value: { key: { namespace: "n", name: "g1" }, changed: ["Deployment"], version, deployment: object() },
    });
    expect(child("dev.knative.apiserver.resource.delete", "42")).toStrictEqual({
      ok: true,
      value: { key: { namespace: "n", name: "g1" }, changed: ["Deployment"] },
    });
  });

  it("marks an added or updated child whose last write was apply's, never a deleted one", () => {
    const managedFields = [{ manager: "dynamo-pool-relay/apply", operation: "Apply", time: "2026-12-01T00:00:00Z" }];
    const object = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "g1-pool-relay", namespace: "n", labels: managed, managedFields },
    };
    const value = { key: { namespace: "n", name: "g1" }, changed: ["ConfigMap"] };
    const version = { kind: "ConfigMap", name: "g1-pool-relay", digest: statusDigest("ConfigMap", object) };
    expect(classifyForStatus(ev("dev.knative.apiserver.resource.add", object))).toStrictEqual({
      ok: true,
      value: { ...value, version, awaitsReport: true },
    });
    expect(classifyForStatus(ev("dev.knative.apiserver.resource.update", object))).toStrictEqual({
      ok: true,
      value: { ...value, version, awaitsReport: true },
    });
    expect(classifyForStatus(ev("dev.knative.apiserver.resource.delete", object))).toStrictEqual({ ok: true, value });
  });

  it("marks an EndpointSlice added with no ready endpoint, not one added with a ready one, nor an update", () => {
    const slice = (ready: boolean | null) => ({
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: "g1-pool-relay-x7k2q", namespace: "n", labels: managed },
      endpoints: [{ addresses: ["10.0.0.1"], conditions: { ready } }],
    });
    const value = (object: Record<string, unknown>) => ({
      key: { namespace: "n", name: "g1" },
      changed: ["EndpointSlice"],
      version: { kind: "EndpointSlice", name: "g1-pool-relay-x7k2q", digest: statusDigest("EndpointSlice", object) },
    });
    expect(classifyForStatus(ev("dev.knative.apiserver.resource.add", slice(false)))).toStrictEqual({
      ok: true,
      value: { ...value(slice(false)), addsNoEndpoint: true },
    });
    expect(classifyForStatus(ev("dev.knative.apiserver.resource.add", slice(true)))).toStrictEqual({
      ok: true,
      value: value(slice(true)),
    });
    expect(classifyForStatus(ev("dev.knative.apiserver.resource.add", slice(null)))).toStrictEqual({
      ok: true,
      value: value(slice(null)),
    });
    expect(classifyForStatus(ev("dev.knative.apiserver.resource.update", slice(false)))).toStrictEqual({
      ok: true,
      value: value(slice(false)),
    });
  });

  it("merges the events one run answers: every changed kind once, the latest reported failure, no version", () => {
    const key = { namespace: "n", name: "g1" };
    const failure = { uid: "u", generation: 2, message: "refused" };
    const later = { uid: "u", generation: 3, message: "refused again" };
    const cm = { key, changed: ["ConfigMap"], version: { kind: "ConfigMap", name: "g1-pool-relay", digest: "d1" } };
    expect(mergeStatusInputs(undefined, cm)).toBe(cm);
    expect(mergeStatusInputs(cm, { key, changed: ["Deployment"] })).toEqual({
      key,
      changed: ["ConfigMap", "Deployment"],
    });
    expect(
      mergeStatusInputs({ key, changed: ["Deployment"], failure }, { key, changed: ["Deployment", "Service"] }),
    ).toEqual({ key, changed: ["Deployment", "Service"], failure });
    expect(
      mergeStatusInputs(
        { key, changed: [], report: true, failure },
        { key, changed: [], report: true, failure: later },
      ),
    ).toEqual({ key, changed: [], report: true, failure: later });
    // A report keeps the shared run reading everything, whichever came first.
    expect(mergeStatusInputs({ key, changed: [], report: true }, { key, changed: ["Deployment"] })).toEqual({
      key,
      changed: ["Deployment"],
      report: true,
    });
    expect(mergeStatusInputs({ key, changed: ["Deployment"] }, { key, changed: [], report: true })).toEqual({
      key,
      changed: ["Deployment"],
      report: true,
    });
  });

  it("keeps the newer Deployment two events carry, and none when one carries none (a delete) or their versions do not compare", () => {
    const key = { namespace: "n", name: "g1" };
    const at = (resourceVersion: string) => ({
      key,
      changed: ["Deployment"],
      deployment: { metadata: { name: "g1-pool-relay", resourceVersion } },
    });
    expect(mergeStatusInputs(at("9"), at("10"))).toStrictEqual({
      key,
      changed: ["Deployment"],
      deployment: at("10").deployment,
    });
    expect(mergeStatusInputs(at("10"), at("9"))).toStrictEqual({
      key,
      changed: ["Deployment"],
      deployment: at("10").deployment,
    });
    expect(mergeStatusInputs(at("9"), { key, changed: ["Deployment"] })).toStrictEqual({
      key,
      changed: ["Deployment"],
    });
    expect(mergeStatusInputs({ key, changed: ["Deployment"] }, at("9"))).toStrictEqual({
      key,
      changed: ["Deployment"],
    });
    expect(mergeStatusInputs(at("9"), at("x9"))).toStrictEqual({ key, changed: ["Deployment"] });
  });
});
