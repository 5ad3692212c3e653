import { describe, expect, it } from "vitest";
import { controlledBy, ownership } from "./ownership.ts";

const UID = "11111111-2222-3333-4444-555555555555";
const ours = { metadata: { ownerReferences: [{ uid: UID, controller: true }] } };
const foreign = { metadata: { ownerReferences: [{ uid: "other", controller: true }] } };

describe("controlledBy", () => {
  it.each([
    { name: "our controller reference", obj: ours, uid: UID, expected: true },
    {
      name: "our controller reference after another, non-controller owner",
      obj: { metadata: { ownerReferences: [{ uid: "other" }, { uid: UID, controller: true }] } },
      uid: UID,
      expected: true,
    },
    { name: "another controller", obj: foreign, uid: UID, expected: false },
    {
      name: "our UID but not as controller",
      obj: { metadata: { ownerReferences: [{ uid: UID, controller: false }] } },
      uid: UID,
      expected: false,
    },
    { name: "no owner at all", obj: { metadata: {} }, uid: UID, expected: false },
    {
      name: "a controller reference, with no UID to compare it with (offline)",
      obj: ours,
      uid: undefined,
      expected: false,
    },
    {
      name: "no owner at all, with no UID to compare (offline): no controller is not ours",
      obj: { metadata: {} },
      uid: undefined,
      expected: false,
    },
    {
      name: "only non-controller owners, with no UID to compare (offline)",
      obj: { metadata: { ownerReferences: [{ uid: "other" }] } },
      uid: undefined,
      expected: false,
    },
  ])("is $expected for $name", ({ obj, uid, expected }) => {
    expect(controlledBy(obj, uid)).toBe(expected);
  });
});

describe("ownership", () => {
  it.each([
    { name: "no Service", svc: undefined, uid: UID, expected: "absent" },
    { name: "our controller reference", svc: ours, uid: UID, expected: "ours" },
    { name: "another controller", svc: foreign, uid: UID, expected: "foreign" },
    {
      name: "our UID but not as controller",
      svc: { metadata: { ownerReferences: [{ uid: UID }] } },
      uid: UID,
      expected: "foreign",
    },
    { name: "no owner at all", svc: { metadata: {} }, uid: UID, expected: "foreign" },
    { name: "an owner without UID to compare (offline)", svc: ours, uid: undefined, expected: "foreign" },
    { name: "no owner and no UID to compare (offline)", svc: { metadata: {} }, uid: undefined, expected: "foreign" },
  ])("says $expected for $name", ({ svc, uid, expected }) => {
    expect(ownership(svc, uid)).toBe(expected);
  });
});
