// `npm start` stops everything it started, in order, when only npm is signalled (as a supervisor,
// a CI timeout or `kill PID` does) and on a terminal's Ctrl-C, which signals the whole group.
// Each case runs a real `npm start` (control plane, Knative, the product) on this host, so this
// file runs on its own (vitest.start.config.ts), never beside the other suites' control planes.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { alive, npmStart, until } from "./npm-start.ts";

describe("npm start, signalled", () => {
  it.each([
    { signal: "SIGTERM", to: "npm" },
    { signal: "SIGINT", to: "npm" },
    { signal: "SIGKILL", to: "npm" },
    // A terminal's Ctrl-C: the whole process group, so the start process gets it from the terminal and again from npm.
    { signal: "SIGINT", to: "group" },
  ] as const)("stops the control plane, Knative and the functions on $signal to the $to", async ({ signal, to }) => {
    const { npm, output: out, stateFile, state } = await npmStart(["--no-samples"]);
    const cpDir = dirname(state.kubeconfig);
    const groups = readFileSync(join(cpDir, "pids"), "utf8").split(/\s+/).filter(Boolean).map(Number);
    // Presence first: the start process, its control plane's process groups and its folder.
    expect(alive(state.pid)).toBe(true);
    expect(groups.length).toBeGreaterThan(3);
    expect(groups.every(alive)).toBe(true);

    process.kill(to === "npm" ? npm.pid! : -npm.pid!, signal);
    await until("everything npm start started has stopped", () => (!alive(state.pid) && !groups.some(alive) && !existsSync(cpDir) ? true : undefined), 60_000)
      .catch((err: Error) => {
        throw new Error(`${err.message}: start process ${alive(state.pid) ? "alive" : "gone"}, ${groups.filter(alive).length} of ${groups.length} groups alive, ${existsSync(cpDir) ? "folder left" : "folder gone"}\n${out()}`);
      });
    // It stopped in order, as on one Ctrl-C, not at once nor by the watchdog: its state file is gone too.
    expect(existsSync(stateFile)).toBe(false);
    expect(out()).not.toContain("stopping at once");
  }, 360_000);
});
