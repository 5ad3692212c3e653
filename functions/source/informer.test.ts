import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../shared/kube/client.ts";
import { ApiError } from "../../shared/kube/errors.ts";
import { inform, type Watcher } from "./informer.ts";

const dep = (name: string, resourceVersion: string): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: "n", uid: `u-${name}`, resourceVersion, managedFields: [{ manager: "m" }] },
});
type Step =
  | { list: KubeObject[] | Error; version: string }
  | {
      watch: [type: "ADDED" | "MODIFIED" | "DELETED", obj: KubeObject][];
      then: "end" | ApiError | Error;
      version?: string;
    };

/** An API server that answers the informer's lists (in pages) and watches in the order the test scripted them; after the script, it waits for the stop. */
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
    async *listPages<T>() {
      const step = next("list");
      if (!step) return;
      if (!("list" in step)) throw new Error("the informer listed where the script watches");
      if (step.list instanceof Error) throw step.list;
      // Two objects a page: the informer must take each page as it comes.
      for (let i = 0; i === 0 || i < step.list.length; i += 2)
        yield { items: step.list.slice(i, i + 2) as T[], resourceVersion: step.version };
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

/** Runs the informer over the script; the clock advances `tickMs` at each look, so a relist period can pass. */
async function run(steps: Step[], options: { relistMs?: number; tickMs?: number } = {}) {
  const stop = new AbortController();
  const { watcher, asked } = scripted(steps, stop);
  const seen: string[] = [];
  const waits: number[] = [];
  let clock = 0;
  await inform(
    watcher,
    { apiVersion: "apps/v1", kind: "Deployment" },
    {
      began: (kind) => seen.push(`began ${kind}`),
      listed: (o) =>
        seen.push(
          `listed ${o.metadata.name}@${o.metadata.resourceVersion}${o.kind === "Deployment" ? "" : " untyped"}`,
        ),
      ended: (i) => seen.push(`ended ${i.objects} objects${i.initial ? ", initial" : ""}`),
      change: (c, o) =>
        seen.push(
          `${c} ${o.metadata.name}@${o.metadata.resourceVersion}${"managedFields" in o.metadata ? " +managedFields" : ""}`,
        ),
      failed: (i) => void waits.push(i.retryInMs),
    },
    stop.signal,
    {
      relistMs: options.relistMs ?? 0,
      now: () => (clock += options.tickMs ?? 0),
      sleep: async (ms) => void waits.push(ms),
    },
  );
  return { seen, asked, waits };
}

const listedItem = (o: KubeObject) => ({ ...o, kind: undefined }) as unknown as KubeObject;

describe("inform: one kind's list and watch", () => {
  it("passes each listed object, a page at a time, typed, then every watch event as it came", async () => {
    const r = await run([
      { list: [listedItem(dep("a", "1")), dep("c", "2"), dep("d", "3")], version: "10" },
      {
        watch: [
          ["ADDED", dep("b", "11")],
          ["MODIFIED", dep("a", "12")],
          ["DELETED", dep("b", "13")],
        ],
        then: "end",
        version: "13",
      },
    ]);
    expect(r.seen).toEqual([
      "began Deployment",
      "listed a@1",
      "listed c@2",
      "listed d@3",
      "ended 3 objects, initial",
      "add b@11 +managedFields",
      "update a@12 +managedFields",
      "delete b@13 +managedFields",
    ]);
    expect(r.asked).toEqual(["list", "watch from 10"]);
  });

  it("resumes a watch the API server ended from the last version, without listing again", async () => {
    const r = await run([
      { list: [], version: "10" },
      { watch: [["ADDED", dep("a", "11")]], then: "end", version: "15" },
      { watch: [["MODIFIED", dep("a", "16")]], then: "end", version: "16" },
    ]);
    expect(r.asked).toEqual(["list", "watch from 10", "watch from 15"]);
    expect(r.seen.slice(2)).toEqual(["add a@11 +managedFields", "update a@16 +managedFields"]);
  });

  it("lists again when the watch's version expired (410): the store then tells what changed meanwhile", async () => {
    const r = await run([
      { list: [dep("a", "1"), dep("b", "2"), dep("c", "3")], version: "10" },
      { watch: [["MODIFIED", dep("a", "11")]], then: new ApiError(410, "WatchError", "too old resource version") },
      { list: [dep("a", "11"), dep("b", "40"), dep("d", "41")], version: "50" },
      { watch: [], then: "end" },
    ]);
    expect(r.asked).toEqual(["list", "watch from 10", "list", "watch from 50"]);
    expect(r.seen.slice(5)).toEqual([
      "update a@11 +managedFields",
      "began Deployment",
      "listed a@11",
      "listed b@40",
      "listed d@41",
      "ended 3 objects",
    ]);
  });

  it("lists again once the relist period has passed, instead of resuming its watch", async () => {
    const r = await run(
      [
        { list: [dep("a", "1")], version: "10" },
        { watch: [], then: "end", version: "12" },
        { list: [dep("a", "1")], version: "20" },
        { watch: [], then: "end" },
      ],
      { relistMs: 1000, tickMs: 600 },
    );
    expect(r.asked).toEqual(["list", "watch from 10", "list", "watch from 20"]);
    expect(r.seen.filter((l) => l.startsWith("ended"))).toEqual(["ended 1 objects, initial", "ended 1 objects"]);
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

  it("lists again after a failed list, once it has waited, and ends only the list that completed", async () => {
    const r = await run([
      { list: new Error("connection refused"), version: "" },
      { list: [dep("a", "1")], version: "10" },
      { watch: [], then: "end" },
    ]);
    expect(r.asked).toEqual(["list", "list", "watch from 10"]);
    expect(r.seen).toEqual(["began Deployment", "began Deployment", "listed a@1", "ended 1 objects, initial"]);
    expect(r.waits).toEqual([500, 500]);
  });
});
