import { describe, expect, it } from "vitest";
import { lostChanges, tap, type Watched } from "./lost-changes.ts";

const w = (kind: string, name: string, resourceVersion: string, change: Watched["change"] = "update"): Watched => ({
  kind,
  key: `n/${name}`,
  resourceVersion,
  change,
});

describe("lostChanges", () => {
  it.each([
    {
      name: "the very version reached the Broker",
      watched: w("Deployment", "a", "10"),
      tapped: [["Deployment/n/a", "10"]],
      lost: false,
    },
    {
      name: "a later version reached it (the source sent only the newest)",
      watched: w("Deployment", "a", "10"),
      tapped: [["Deployment/n/a", "12"]],
      lost: false,
    },
    {
      name: "only an older version reached it",
      watched: w("Deployment", "a", "10"),
      tapped: [["Deployment/n/a", "9"]],
      lost: true,
    },
    { name: "nothing about the object reached it", watched: w("EndpointSlice", "a", "10"), tapped: [], lost: true },
    {
      name: "another kind of the same name reached it",
      watched: w("Service", "a", "10"),
      tapped: [["Deployment/n/a", "10"]],
      lost: true,
    },
    {
      name: "a delete that reached it",
      watched: w("Service", "a", "15", "delete"),
      tapped: [["Service/n/a", "15"]],
      lost: false,
    },
    {
      name: "an EndpointSlice's add that did not reach it",
      watched: w("EndpointSlice", "a", "10", "add"),
      tapped: [],
      lost: true,
    },
    {
      name: "a DynamoPoolRelay's add that did not reach it",
      watched: w("DynamoPoolRelay", "a", "10", "add"),
      tapped: [],
      lost: true,
    },
  ])("$name: lost $lost", ({ watched, tapped, lost }) => {
    expect(lostChanges([watched], new Map(tapped as [string, string][]))).toEqual(lost ? [watched] : []);
  });
});

describe("tap", () => {
  it("keeps the newest version per object, whatever order the events came in", () => {
    const tapped = new Map<string, string>();
    for (const rv of ["5", "9", "7"])
      tap(tapped, { data: { kind: "Deployment", metadata: { namespace: "n", name: "a", resourceVersion: rv } } });
    tap(tapped, { data: { kind: "Service", metadata: { namespace: "n", name: "a", resourceVersion: "3" } } });
    expect([...tapped]).toEqual([
      ["Deployment/n/a", "9"],
      ["Service/n/a", "3"],
    ]);
  });

  it("counts the objects an event covers, at their versions, as reached", () => {
    const tapped = new Map<string, string>([["EndpointSlice/n/a-x", "4"]]);
    tap(tapped, {
      data: { kind: "Deployment", metadata: { namespace: "n", name: "a", resourceVersion: "6" } },
      extensions: { covers: "EndpointSlice/a-x@5 EndpointSlice/a-y@2" },
    });
    expect([...tapped]).toEqual([
      ["EndpointSlice/n/a-x", "5"],
      ["Deployment/n/a", "6"],
      ["EndpointSlice/n/a-y", "2"],
    ]);
    expect(
      lostChanges([{ kind: "EndpointSlice", key: "n/a-x", resourceVersion: "5", change: "update" }], tapped),
    ).toEqual([]);
  });

  it("ignores what is no object (a product event's data)", () => {
    const tapped = new Map<string, string>();
    tap(tapped, { data: { metadata: { name: "a" } } });
    tap(tapped, {});
    expect(tapped.size).toBe(0);
  });
});
