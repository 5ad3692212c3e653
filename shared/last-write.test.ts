import { describe, expect, it } from "vitest";
import { lastWrittenByApply } from "./last-write.ts";

const applyEntry = (time = "2026-12-01T10:00:05Z", extra: Record<string, unknown> = {}) => ({
  manager: "dynamo-pool-relay/apply",
  operation: "Apply",
  apiVersion: "v1",
  time,
  fieldsType: "FieldsV1",
  ...extra,
});
const controller = (time: string) => ({
  manager: "kube-controller-manager",
  operation: "Update",
  subresource: "status",
  apiVersion: "apps/v1",
  time,
});
const child = (managedFields: unknown, metadata: Record<string, unknown> = {}) => ({
  metadata: { name: "g1-pool-relay", namespace: "team-a", managedFields, ...metadata },
});

describe("lastWrittenByApply", () => {
  it.each([
    { name: "apply's entry alone (a child apply just created)", obj: child([applyEntry()]) },
    {
      name: "apply's entry after the controller's (a rollout's spec write)",
      obj: child([controller("2026-12-01T10:00:04Z"), applyEntry()]),
    },
    {
      name: "apply's entry after an earlier foreign edit",
      obj: child([{ manager: "kubectl-edit", operation: "Update", time: "2026-12-01T09:00:00Z" }, applyEntry()]),
    },
    {
      name: "apply's entry with an empty subresource",
      obj: child([applyEntry("2026-12-01T10:00:05Z", { subresource: "" })]),
    },
  ])("is true for $name", ({ obj }) => {
    expect(lastWrittenByApply(obj)).toBe(true);
  });

  it.each([
    {
      name: "the controller's status update after apply's write",
      obj: child([applyEntry(), controller("2026-12-01T10:00:06Z")]),
    },
    {
      name: "another manager in the same second (cannot be ordered)",
      obj: child([applyEntry(), controller("2026-12-01T10:00:05Z")]),
    },
    {
      name: "a foreign edit after apply's write",
      obj: child([applyEntry(), { manager: "kubectl-edit", operation: "Update", time: "2026-12-01T10:01:00Z" }]),
    },
    {
      name: "another manager's entry without a time",
      obj: child([applyEntry(), { manager: "kubectl-edit", operation: "Update" }]),
    },
    { name: "apply's entry without a time", obj: child([{ manager: "dynamo-pool-relay/apply", operation: "Apply" }]) },
    { name: "apply's entry with a time that is no time", obj: child([applyEntry("yesterday")]) },
    {
      name: "apply's manager name on an Update, not a server-side apply",
      obj: child([{ ...applyEntry(), operation: "Update" }]),
    },
    {
      name: "apply's entry on the status subresource",
      obj: child([applyEntry("2026-12-01T10:00:05Z", { subresource: "status" })]),
    },
    { name: "another product's apply", obj: child([{ ...applyEntry(), manager: "dynamo-pool-relay/status" }]) },
    {
      name: "no entry of apply's (the EndpointSlice controller's slice)",
      obj: child([controller("2026-12-01T10:00:05Z")]),
    },
    { name: "no managedFields", obj: child(undefined) },
    { name: "managedFields that are no list", obj: child({ manager: "dynamo-pool-relay/apply" }) },
    { name: "no metadata", obj: {} },
    {
      name: "a deletion in progress (not field-managed)",
      obj: child([applyEntry()], { deletionTimestamp: "2026-12-01T10:00:09Z" }),
    },
  ])("is false for $name", ({ obj }) => {
    expect(lastWrittenByApply(obj)).toBe(false);
  });
});
