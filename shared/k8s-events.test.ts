import { describe, expect, it } from "vitest";
import type { DynamoPoolRelayStatus } from "./api/dynamo-pool-relay.ts";
import { APPLIED_HASH, NO_STORED_VERSION } from "./apply-plan.ts";
import {
  Reporter,
  applied,
  eventName,
  foreignChildren,
  readyTransition,
  rejected,
  renderEvent,
  withdrawn,
  type AppliedChild,
} from "./k8s-events.ts";

const dpr = { metadata: { name: "g1", namespace: "team-a", uid: "u1", generation: 3 } };
const T = "2026-03-01T00:00:00Z";

describe("renderEvent", () => {
  it("is a core/v1 Event about the DynamoPoolRelay, as kubectl describe finds it, from the reporting function", () => {
    expect(renderEvent(dpr, rejected("InvalidSpec", "spec.clusterID: bad"), Reporter.Apply, T)).toEqual({
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: expect.stringMatching(/^g1\.[0-9a-f]{16}$/) as unknown, namespace: "team-a" },
      involvedObject: {
        apiVersion: "nvidia.com/v1alpha1",
        kind: "DynamoPoolRelay",
        name: "g1",
        namespace: "team-a",
        uid: "u1",
      },
      type: "Warning",
      reason: "InvalidSpec",
      message: "spec.clusterID: bad",
      source: { component: "dynamo-pool-relay/apply" },
      reportingComponent: "dynamo-pool-relay/apply",
      firstTimestamp: T,
      lastTimestamp: T,
      count: 1,
    });
  });

  it.each([
    { name: "ASCII", unit: "x" },
    { name: "multi-byte characters, never cut in half", unit: "é€😀" },
  ])("cuts a long message to at most 1 KiB ($name) and says so", ({ unit }) => {
    const message = renderEvent(dpr, rejected("ApplyFailed", unit.repeat(2000)), Reporter.Apply, T).message;
    // 1 KiB, the cap events.k8s.io puts on an Event's note, written out so a changed limit fails here.
    expect(Buffer.byteLength(message)).toBeLessThanOrEqual(1024);
    expect(Buffer.byteLength(message)).toBeGreaterThan(1024 - 8);
    expect(message.endsWith("...")).toBe(true);
    expect(unit.repeat(2000).startsWith(message.slice(0, -3))).toBe(true);
  });

  it("keeps a message of exactly 1 KiB whole", () => {
    const message = "x".repeat(1024);
    expect(renderEvent(dpr, rejected("ApplyFailed", message), Reporter.Apply, T).message).toBe(message);
  });
});

describe("eventName", () => {
  const base = { identity: ["Applied", "7", "ConfigMap#h"] };
  it("is the same for the same occurrence (so a duplicate's create gets 409), whatever the time or message", () => {
    expect(eventName(dpr, base)).toBe(eventName(dpr, { identity: [...base.identity] }));
    const a = renderEvent(dpr, { ...base, type: "Normal", reason: "Applied", message: "one" }, Reporter.Apply, T);
    const b = renderEvent(
      dpr,
      { ...base, type: "Normal", reason: "Published", message: "two" },
      Reporter.Apply,
      "2027-01-01T00:00:00Z",
    );
    expect(a.metadata.name).toBe(b.metadata.name);
  });

  it.each([
    {
      name: "another DynamoPoolRelay of the same name (UID)",
      d: { metadata: { ...dpr.metadata, uid: "u2" } },
      o: base,
    },
    { name: "another generation", d: { metadata: { ...dpr.metadata, generation: 4 } }, o: base },
    { name: "another occurrence", d: dpr, o: { identity: ["Applied", "8", "ConfigMap#h"] } },
    { name: "parts that join to the same text", d: dpr, o: { identity: ["Applied", "7ConfigMap#h"] } },
  ])("differs for $name", ({ d, o }) => {
    expect(eventName(d, o)).not.toBe(eventName(dpr, base));
  });
});

const child = (kind: string, hash: string, resourceVersion?: string): AppliedChild => ({
  kind,
  metadata: {
    name: "g1-pool-relay",
    annotations: { [APPLIED_HASH]: hash },
    ...(resourceVersion ? { resourceVersion } : {}),
  },
});
const at = (resourceVersion: string) => ({ metadata: { ...dpr.metadata, resourceVersion } });

describe("applied", () => {
  const desired = [child("ConfigMap", "c"), child("Deployment", "d"), child("Service", "s")];

  it("is Published when the Service was created, naming every child written", () => {
    const o = applied(at("7"), desired, desired, "svc-1");
    expect(o).toEqual({
      type: "Normal",
      reason: "Published",
      message: "Service g1-pool-relay published; applied ConfigMap, Deployment, Service for generation 3",
      identity: ["Published", "svc-1"],
    });
  });

  it("is Published when the Service was created unread, over the version no stored object carries", () => {
    const unread = desired.map((d) => child(d.kind, d.metadata.annotations![APPLIED_HASH]!, NO_STORED_VERSION));
    expect(applied(at("7"), unread, desired, "svc-1")).toMatchObject({
      reason: "Published",
      identity: ["Published", "svc-1"],
    });
  });

  it("is one Published per Service object: applies racing to create it got the same one back, whatever else each wrote", () => {
    expect(eventName(dpr, applied(at("7"), desired, desired, "svc-1"))).toBe(
      eventName(dpr, applied(at("8"), [child("Service", "s")], desired, "svc-1")),
    );
    // Published again after a withdrawal: another Service object.
    expect(eventName(dpr, applied(at("9"), [child("Service", "s")], desired, "svc-2"))).not.toBe(
      eventName(dpr, applied(at("7"), desired, desired, "svc-1")),
    );
  });

  it("is Applied when the Service already existed or was not written", () => {
    expect(applied(at("7"), [child("Service", "s", "40")], desired, "svc-1")).toMatchObject({
      reason: "Applied",
      message: "applied Service for generation 3",
    });
    expect(applied(at("7"), [child("ConfigMap", "c", "41")], desired, undefined)).toMatchObject({
      reason: "Applied",
      message: "applied ConfigMap for generation 3",
    });
  });

  it("is one Applied for applies that decided the same from the same reading, even when one saw the other's writes", () => {
    const both = [child("ConfigMap", "c", "41"), child("Deployment", "d", "42")];
    expect(eventName(dpr, applied(at("7"), both, desired, undefined))).toBe(
      eventName(dpr, applied(at("7"), [both[1]!], desired, undefined)),
    );
  });

  it("is another Applied for another decision, or the same decision from a later reading", () => {
    const first = eventName(dpr, applied(at("7"), [child("ConfigMap", "c", "41")], desired, undefined));
    // A DGD rollout: another document.
    expect(
      eventName(
        dpr,
        applied(at("7"), [child("ConfigMap", "c2", "41")], [child("ConfigMap", "c2"), ...desired.slice(1)], undefined),
      ),
    ).not.toBe(first);
    // Rolled back: the first decision again, after status writes.
    expect(eventName(dpr, applied(at("12"), [child("ConfigMap", "c", "44")], desired, undefined))).not.toBe(first);
  });
});

describe("withdrawn, rejected, foreignChildren", () => {
  it("withdrawn tells one Service object from another by its UID", () => {
    expect(withdrawn("g1-pool-relay", "s1", "DynamoGraphDeployment team-a/g1 does not exist")).toEqual({
      type: "Normal",
      reason: "Withdrawn",
      message: "Service g1-pool-relay withdrawn: DynamoGraphDeployment team-a/g1 does not exist",
      identity: ["Withdrawn", "s1"],
    });
    expect(eventName(dpr, withdrawn("g1-pool-relay", "s2", "x"))).not.toBe(
      eventName(dpr, withdrawn("g1-pool-relay", "s1", "y")),
    );
  });

  it("rejected is one Event per reason and generation, whatever the message", () => {
    expect(rejected("ApplyFailed", "m")).toEqual({
      type: "Warning",
      reason: "ApplyFailed",
      message: "m",
      identity: ["ApplyFailed"],
    });
    expect(eventName(dpr, rejected("ApplyFailed", "one"))).toBe(eventName(dpr, rejected("ApplyFailed", "two")));
    expect(eventName(dpr, rejected("ApplyFailed", "m"))).not.toBe(eventName(dpr, rejected("InvalidSpec", "m")));
  });

  it("foreignChildren names each skipped child and is one Event per set of kinds, in any order", () => {
    const sa = {
      kind: "ServiceAccount",
      reason: "ServiceAccount g1-pool-relay exists and is not controlled by this DynamoPoolRelay",
    };
    const rb = {
      kind: "RoleBinding",
      reason:
        "RoleBinding g1-pool-relay is not applied: it needs ServiceAccount g1-pool-relay, which is not controlled by this DynamoPoolRelay",
    };
    expect(foreignChildren([sa, rb])).toMatchObject({
      type: "Warning",
      reason: "ForeignChild",
      message: `${sa.reason}; ${rb.reason}`,
    });
    expect(eventName(dpr, foreignChildren([sa, rb]))).toBe(eventName(dpr, foreignChildren([rb, sa])));
    expect(eventName(dpr, foreignChildren([sa]))).not.toBe(eventName(dpr, foreignChildren([sa, rb])));
  });
});

describe("readyTransition", () => {
  const status = (
    s?: "True" | "False",
    reason = s === "True" ? "Ready" : "RolloutPending",
    message = "m",
    time = T,
  ): DynamoPoolRelayStatus =>
    s
      ? {
          conditions: [
            { type: "Ready", status: s, reason, message, lastTransitionTime: time },
            { type: "Eligible", status: "True", reason: "Eligible", message: "e", lastTransitionTime: time },
          ],
        }
      : {};

  it.each<{
    name: string;
    before: DynamoPoolRelayStatus | undefined;
    after: DynamoPoolRelayStatus;
    want: { type: string; reason: string; message: string } | undefined;
  }>([
    {
      name: "False to True",
      before: status("False"),
      after: status("True", "Ready", "the Relay listens at g1-pool-relay.team-a.svc:5561"),
      want: {
        type: "Normal",
        reason: "Ready",
        message: "Ready is True: the Relay listens at g1-pool-relay.team-a.svc:5561",
      },
    },
    {
      name: "True to False, with the reason",
      before: status("True"),
      after: status("False", "ListenerUnavailable", "no ready Relay endpoint behind the Service"),
      want: {
        type: "Warning",
        reason: "NotReady",
        message: "Ready is False (ListenerUnavailable): no ready Relay endpoint behind the Service",
      },
    },
    {
      name: "a new DynamoPoolRelay that is Ready at once",
      before: undefined,
      after: status("True"),
      want: { type: "Normal", reason: "Ready", message: "Ready is True: m" },
    },
    {
      name: "a new DynamoPoolRelay starting not Ready (no change)",
      before: undefined,
      after: status("False", "Reconciling"),
      want: undefined,
    },
    {
      name: "a status without conditions yet starting not Ready",
      before: {},
      after: status("False", "Reconciling"),
      want: undefined,
    },
    {
      name: "False with another reason (no transition)",
      before: status("False", "Reconciling"),
      after: status("False", "RolloutPending"),
      want: undefined,
    },
    {
      name: "True, other fields changed",
      before: status("True", "Ready", "a"),
      after: status("True", "Ready", "b"),
      want: undefined,
    },
  ])("$name", ({ before, after, want }) => {
    const got = readyTransition(before, after, "17");
    if (want === undefined) return expect(got).toBeUndefined();
    expect(got).toMatchObject(want);
  });

  it("tells transitions apart by the status version each write replaced", () => {
    const name = (rv: string) => eventName(dpr, readyTransition(status("True"), status("False"), rv)!);
    expect(name("17")).toBe(name("17"));
    expect(name("17")).not.toBe(name("18"));
  });
});

describe("Event names and identities, exactly", () => {
  // The name is `<name>.` and the first 16 hex digits of the SHA-256 of UID, generation and identity
  // joined by NUL (computed with sha256sum), stable across versions so a redelivery after an
  // upgrade still gets 409.
  it.each([
    { name: "UID, generation and identity", d: dpr, expected: "g1.c214451aad3547e8" },
    {
      name: "an object read without UID, as an empty UID",
      d: { metadata: { name: "g1", namespace: "team-a", generation: 3 } },
      expected: "g1.f18d1162481a4cba",
    },
    {
      name: "an object read without generation, as generation 1",
      d: { metadata: { name: "g1", namespace: "team-a", uid: "u1" } },
      expected: "g1.138a04e679e050fe",
    },
  ])("derives the name from $name", ({ d, expected }) => {
    expect(eventName(d, rejected("InvalidSpec", "m"))).toBe(expected);
  });

  it("addresses an Event about an object read without namespace or UID to namespace default and an empty UID", () => {
    const e = renderEvent({ metadata: { name: "g1" } }, rejected("InvalidSpec", "m"), Reporter.Status, T);
    expect(e.metadata).toEqual({ name: "g1.eb8c3a19f45cede5", namespace: "default" });
    expect(e.involvedObject).toEqual({
      apiVersion: "nvidia.com/v1alpha1",
      kind: "DynamoPoolRelay",
      name: "g1",
      namespace: "default",
      uid: "",
    });
    expect(e.source).toEqual({ component: "dynamo-pool-relay/status" });
  });

  it("cuts a long message at exactly 1 KiB, the ellipsis included", () => {
    const message = renderEvent(dpr, rejected("ApplyFailed", "x".repeat(2000)), Reporter.Apply, T).message;
    expect(message).toBe(`${"x".repeat(1021)}...`);
  });

  it("identifies Applied by this version's reading and every desired child's intent hash, in order", () => {
    expect(
      applied(
        at("7"),
        [child("ConfigMap", "c", "41")],
        [child("ConfigMap", "c"), child("Deployment", "d"), child("Service", "s")],
        undefined,
      ).identity,
    ).toEqual(["Applied", "7", "ConfigMap#c", "Deployment#d", "Service#s"]);
    const bare: AppliedChild = { kind: "ConfigMap", metadata: { name: "g1-pool-relay", resourceVersion: "41" } };
    expect(applied(dpr, [bare], [bare], undefined).identity).toEqual(["Applied", "", "ConfigMap#"]);
  });

  it("is Applied, not Published, when another child was created but the Service already existed", () => {
    const o = applied(
      at("7"),
      [child("ConfigMap", "c"), child("Service", "s", "40")],
      [child("ConfigMap", "c"), child("Service", "s")],
      "svc-1",
    );
    expect(o).toEqual({
      type: "Normal",
      reason: "Applied",
      message: "applied ConfigMap, Service for generation 3",
      identity: ["Applied", "7", "ConfigMap#c", "Service#s"],
    });
  });

  it("identifies Published with an empty Service UID when none was returned", () => {
    expect(applied(at("7"), [child("Service", "s")], [child("Service", "s")], undefined).identity).toEqual([
      "Published",
      "",
    ]);
  });

  it("identifies ForeignChild by its kind of reason and the skipped kinds, sorted", () => {
    expect(
      foreignChildren([
        { kind: "ServiceAccount", reason: "a" },
        { kind: "RoleBinding", reason: "b" },
      ]).identity,
    ).toEqual(["ForeignChild", "RoleBinding", "ServiceAccount"]);
  });

  it("finds Ready wherever it is in the conditions, and identifies the transition by the replaced version (empty when none)", () => {
    const ready = (status: "True" | "False", reason: string): DynamoPoolRelayStatus => ({
      conditions: [
        { type: "Eligible", status: "True", reason: "Eligible", message: "e", lastTransitionTime: T },
        { type: "Ready", status, reason, message: "m", lastTransitionTime: T },
      ],
    });
    expect(readyTransition(ready("False", "RolloutPending"), ready("True", "Ready"), "17")).toEqual({
      type: "Normal",
      reason: "Ready",
      message: "Ready is True: m",
      identity: ["Ready", "True", "17"],
    });
    expect(readyTransition(ready("True", "Ready"), ready("False", "RolloutPending"), undefined)).toEqual({
      type: "Warning",
      reason: "NotReady",
      message: "Ready is False (RolloutPending): m",
      identity: ["Ready", "False", ""],
    });
    expect(readyTransition(ready("True", "Ready"), ready("True", "Ready"), "17")).toBeUndefined();
  });
});
