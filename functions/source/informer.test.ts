import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../shared/kube/client.ts";
import { ApiError } from "../../shared/kube/errors.ts";
import { inform, type Watcher } from "./informer.ts";

const dep = (name: string, resourceVersion: string): KubeObject => ({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name, namespace: "n", uid: `u-${name}`, resourceVersion, managedFields: [{ manager: "m" }] } });
type Step =
  | { list: KubeObject[] | Error; version: string }
  | { watch: [type: "ADDED" | "MODIFIED" | "DELETED", obj: KubeObject][]; then: "end" | ApiError | Error; version?: string };

/** An API server that answers the informer's lists and watches in the order the test scripted them; after the script, it waits for the stop. */
function scripted(steps: Step[], stop: AbortController) {
  const asked: string[] = [];
  const next = (what: string) => {
    const step = steps.shift();
    if (!step) {
      stop.abort();
      return undefined;
    }
    asked.push(what);
    return step;
  };
  const watcher: Watcher = {
    async listAll<T>() {
      const step = next("list");
      if (!step) return { items: [] as T[], resourceVersion: "" };
      if (!("list" in step)) throw new Error("the informer listed where the script watches");
      if (step.list instanceof Error) throw step.list;
      return { items: step.list as T[], resourceVersion: step.version };
    },
    async listAndWatch(_v, _k, _s, onEvent, _signal, resumeFrom) {
      const step = next(`watch from ${resumeFrom}`);
      if (!step) return resumeFrom;
      if (!("watch" in step)) throw new Error("the informer watched where the script lists");
      for (const [type, obj] of step.watch) onEvent(type, obj as never);
      if (step.then !== "end") throw step.then;
      return step.version ?? resumeFrom;
    },
  };
  return { watcher, asked };
}

async function run(steps: Step[]) {
  const stop = new AbortController();
  const { watcher, asked } = scripted(steps, stop);
  const changes: string[] = [];
  const previous: string[] = [];
  const lists: string[] = [];
  const waits: number[] = [];
  await inform(watcher, { apiVersion: "apps/v1", kind: "Deployment" }, {
    change: (c, o, p) => {
      changes.push(`${c} ${o.metadata.name}@${o.metadata.resourceVersion}${"managedFields" in o.metadata ? " +managedFields" : ""}`);
      previous.push(p ? `${p.metadata.name}@${p.metadata.resourceVersion}` : "-");
    },
    listed: (i) => lists.push(`${i.initial ? "initial" : "relist"} ${i.objects.length} objects, ${i.changes} changes`),
    failed: (i) => void waits.push(i.retryInMs),
  }, stop.signal, async (ms) => void waits.push(ms));
  return { changes, previous, lists, asked, waits };
}

describe("inform: one kind's list and watch", () => {
  it("passes nothing on for what the first list finds, then every watch event as it came", async () => {
    const r = await run([
      { list: [dep("a", "1")], version: "10" },
      { watch: [["ADDED", dep("b", "11")], ["MODIFIED", dep("a", "12")], ["DELETED", dep("b", "13")]], then: "end", version: "13" },
    ]);
    expect(r.lists).toEqual(["initial 1 objects, 0 changes"]);
    expect(r.changes).toEqual(["add b@11 +managedFields", "update a@12 +managedFields", "delete b@13 +managedFields"]);
    expect(r.asked).toEqual(["list", "watch from 10"]);
  });

  it("resumes a watch the API server ended from the last version, without listing again", async () => {
    const r = await run([
      { list: [], version: "10" },
      { watch: [["ADDED", dep("a", "11")]], then: "end", version: "15" },
      { watch: [["MODIFIED", dep("a", "16")]], then: "end", version: "16" },
    ]);
    expect(r.asked).toEqual(["list", "watch from 10", "watch from 15"]);
    expect(r.changes).toEqual(["add a@11 +managedFields", "update a@16 +managedFields"]);
  });

  it("lists again when the watch's version expired (410), and passes on what changed meanwhile: the changes Knative's adapter loses", async () => {
    const r = await run([
      { list: [dep("a", "1"), dep("b", "2"), dep("c", "3")], version: "10" },
      { watch: [["MODIFIED", dep("a", "11")]], then: new ApiError(410, "WatchError", "too old resource version") },
      { list: [dep("a", "11"), dep("b", "40"), dep("d", "41")], version: "50" },
      { watch: [], then: "end" },
    ]);
    expect(r.asked).toEqual(["list", "watch from 10", "list", "watch from 50"]);
    // A delete found by the relist carries the object as last seen, kept without its managed fields.
    expect(r.changes).toEqual(["update a@11 +managedFields", "update b@40 +managedFields", "add d@41 +managedFields", "delete c@3"]);
    expect(r.lists).toEqual(["initial 3 objects, 0 changes", "relist 3 objects, 3 changes"]);
    // Each with the object as the source saw it before: after the watch's own event for a.
    expect(r.previous).toEqual(["a@1", "b@2", "-", "c@3"]);
  });

  it("keeps the watch's own changes for the diff: an object the watch saw deleted is not deleted again", async () => {
    const r = await run([
      { list: [dep("a", "1"), dep("b", "2")], version: "10" },
      { watch: [["DELETED", dep("b", "11")], ["ADDED", dep("c", "12")]], then: new ApiError(410, "Expired", "gone") },
      { list: [dep("a", "1"), dep("c", "12")], version: "20" },
    ]);
    expect(r.changes).toEqual(["delete b@11 +managedFields", "add c@12 +managedFields"]);
  });

  it("waits and watches again from the same version after any other failure, waiting longer each time in a row", async () => {
    const r = await run([
      { list: [], version: "10" },
      { watch: [], then: new Error("connection refused") },
      { watch: [], then: new ApiError(503, "ServiceUnavailable", "busy") },
      { watch: [["ADDED", dep("a", "11")]], then: new Error("reset") },
      { watch: [], then: "end" },
    ]);
    expect(r.asked).toEqual(["list", "watch from 10", "watch from 10", "watch from 10", "watch from 11"]);
    // Each failure is reported with its wait, then waited; an event in between starts the waits over.
    expect(r.waits).toEqual([500, 500, 1000, 1000, 500, 500]);
  });

  it("lists again after a failed list, once it has waited", async () => {
    const r = await run([
      { list: new Error("connection refused"), version: "" },
      { list: [dep("a", "1")], version: "10" },
      { watch: [], then: "end" },
    ]);
    expect(r.asked).toEqual(["list", "list", "watch from 10"]);
    expect(r.lists).toEqual(["initial 1 objects, 0 changes"]);
    expect(r.waits).toEqual([500, 500]);
  });
});
