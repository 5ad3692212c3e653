import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ancestors, parseStat } from "./ancestors.ts";

describe("parseStat", () => {
  it.each([
    ["4242 (node) S 4200 4242 4200 0 -1 4194304 100 0 0 0 1 2 0 0 20 0 11 0 987654 1000 100", { ppid: 4200, start: "987654" }],
    ["7 (a (weird) name) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0", { ppid: 1, start: "55" }],
    ["garbage", undefined],
  ])("%s", (line, expected) => {
    expect(parseStat(line)).toEqual(expected);
  });
});

describe("ancestors", () => {
  it("lists the chain of parents, nearest first, from /proc", async () => {
    // A shell whose child prints its own ancestors: the shell comes first, then this test's process.
    const script = `import("${new URL("./ancestors.ts", import.meta.url).pathname}").then((m) => console.log(JSON.stringify(m.ancestors().map((a) => a.pid))))`;
    const child = spawn("sh", ["-c", `${process.execPath} -e '${script}'; true`], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    await new Promise((r) => child.on("exit", r));
    const pids = JSON.parse(out) as number[];
    expect(pids[0]).toBe(child.pid);
    expect(pids[1]).toBe(process.pid);
    expect(pids).toEqual(expect.arrayContaining(ancestors().map((a) => a.pid)));
  });
});
