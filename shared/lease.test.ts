import { describe, expect, it } from "vitest";
import { leading, leaseStep, microTime, released, type ElectionSettings, type ObservedLease } from "./lease.ts";

const me: ElectionSettings = {
  identity: "source-a",
  leaseDurationMs: 15_000,
  renewEveryMs: 5_000,
  renewDeadlineMs: 10_000,
};
const T = 1_000_000;
const lease = (
  holderIdentity: string | undefined,
  observedAt: number,
  extra: Partial<ObservedLease["spec"]> = {},
): ObservedLease => ({
  spec: {
    holderIdentity,
    leaseDurationSeconds: 15,
    acquireTime: microTime(0),
    renewTime: microTime(observedAt),
    leaseTransitions: 2,
    ...extra,
  },
  resourceVersion: "7",
  observedAt,
});

describe("leaseStep: what a candidate does with the Lease as last seen", () => {
  it("creates the Lease when there is none, held by itself", () => {
    expect(leaseStep(undefined, T, me)).toEqual({
      action: "create",
      spec: {
        holderIdentity: "source-a",
        leaseDurationSeconds: 15,
        acquireTime: microTime(T),
        renewTime: microTime(T),
        leaseTransitions: 0,
      },
    });
  });

  it("renews its own Lease, keeping when it acquired it and the count of transitions", () => {
    expect(leaseStep(lease("source-a", T - 4_000), T, me)).toEqual({
      action: "renew",
      spec: {
        holderIdentity: "source-a",
        leaseDurationSeconds: 15,
        acquireTime: microTime(0),
        renewTime: microTime(T),
        leaseTransitions: 2,
      },
    });
  });

  it.each([
    { name: "seen renewed just now", observedAt: T, expected: { action: "wait", retryInMs: 15_000 } },
    {
      name: "unchanged for 14.999 s by this candidate's clock",
      observedAt: T - 14_999,
      expected: { action: "wait", retryInMs: 1 },
    },
    { name: "unchanged for its whole duration", observedAt: T - 15_000, expected: { action: "acquire" } },
  ])("another's Lease, $name: $expected.action", ({ observedAt, expected }) => {
    expect(leaseStep(lease("source-b", observedAt), T, me)).toMatchObject(expected);
  });

  it("takes over a lapsed Lease as a new holder: acquired now, one more transition", () => {
    expect(leaseStep(lease("source-b", T - 20_000), T, me)).toEqual({
      action: "acquire",
      spec: {
        holderIdentity: "source-a",
        leaseDurationSeconds: 15,
        acquireTime: microTime(T),
        renewTime: microTime(T),
        leaseTransitions: 3,
      },
    });
  });

  it("judges lapse by when it saw the record, never by the holder's clock (renewTime)", () => {
    // A renewTime an hour old, from a holder whose clock runs behind: seen just now, it is not lapsed.
    expect(leaseStep(lease("source-b", T, { renewTime: microTime(T - 3_600_000) }), T, me)).toMatchObject({
      action: "wait",
    });
  });

  it("takes a released Lease (no holder) at once, and the duration the Lease states", () => {
    expect(leaseStep(lease("", T), T, me)).toMatchObject({ action: "acquire" });
    expect(leaseStep(lease("source-b", T - 2_000, { leaseDurationSeconds: 1 }), T, me)).toMatchObject({
      action: "acquire",
    });
  });
});

describe("released and leading", () => {
  it("gives the Lease up as client-go does: no holder, a duration of one second", () => {
    expect(released(lease("source-a", T).spec, T + 1)).toEqual({
      holderIdentity: "",
      leaseDurationSeconds: 1,
      acquireTime: microTime(0),
      renewTime: microTime(T + 1),
      leaseTransitions: 2,
    });
  });

  it.each([
    { name: "holding it, renewed 9.999 s ago", holder: "source-a", renewedAt: T - 9_999, expected: true },
    {
      name: "holding it, not renewed for the renew deadline",
      holder: "source-a",
      renewedAt: T - 10_000,
      expected: false,
    },
    { name: "holding it by record, never renewed here", holder: "source-a", renewedAt: undefined, expected: false },
    { name: "renewed here, then taken by another", holder: "source-b", renewedAt: T - 1_000, expected: false },
  ])("leads when $name: $expected", ({ holder, renewedAt, expected }) => {
    expect(leading(lease(holder, T), renewedAt, T, me)).toBe(expected);
  });

  it("stops leading before any other candidate may see the Lease lapse", () => {
    expect(me.renewDeadlineMs).toBeLessThan(me.leaseDurationMs);
  });
});
