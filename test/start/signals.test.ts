// `npm start` stops everything it started, in order, when only npm is signalled (as a supervisor,
// a CI timeout or `kill PID` does) and on a terminal's Ctrl-C, which signals the whole group; and
// when its own process is killed outright, its control plane's watchdog does. Either way nothing
// of the node is left on the host: no process (containerd, a shim, a container, the kubelet), mount,
// network namespace, link, cgroup or folder (test/node-leftovers.ts). Each case runs a real
// `npm start` on this host, so this file runs on its own (vitest.start.config.ts).
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { leftOf, nodeFootprint, present } from "../node-leftovers.ts";
import { alive, npmStart, until } from "./npm-start.ts";

describe("npm start, signalled", () => {
  it.each([
    { signal: "SIGTERM", to: "npm" },
    { signal: "SIGINT", to: "npm" },
    { signal: "SIGKILL", to: "npm" },
    // A terminal's Ctrl-C: the whole process group, so the start process gets it from the terminal and again from npm.
    { signal: "SIGINT", to: "group" },
    // No stop at all: the control plane's watchdog sees its owner gone.
    { signal: "SIGKILL", to: "start" },
  ] as const)(
    "leaves nothing of the control plane, the node, Knative or the functions on $signal to the $to",
    async ({ signal, to }) => {
      const { npm, output: out, stateFile, state } = await npmStart(["--no-samples"]);
      const cpDir = dirname(state.kubeconfig);
      const groups = readFileSync(join(cpDir, "pids"), "utf8").split(/\s+/).filter(Boolean).map(Number);
      const footprint = nodeFootprint(cpDir);
      // Presence first: the start process, its control plane's process groups, and every kind of the node's footprint.
      expect(alive(state.pid)).toBe(true);
      expect(groups.length).toBeGreaterThan(3);
      expect(groups.every(alive)).toBe(true);
      expect(present(footprint)).toEqual([]);

      process.kill(to === "npm" ? npm.pid! : to === "group" ? -npm.pid! : state.pid, signal);
      await until(
        "nothing npm start started is left",
        () => (!alive(state.pid) && !groups.some(alive) && leftOf(footprint).length === 0 ? true : undefined),
        90_000,
      ).catch((err: Error) => {
        throw new Error(
          `${err.message}: start process ${alive(state.pid) ? "alive" : "gone"}, ${groups.filter(alive).length} of ${groups.length} groups alive\n${leftOf(footprint).join("\n")}\n${out()}`,
        );
      });
      if (to === "start") return;
      // It stopped in order, as on one Ctrl-C, not at once nor by the watchdog: its state file is gone too.
      expect(existsSync(stateFile)).toBe(false);
      expect(out()).toContain("\nstopped\n");
      expect(out()).not.toContain("stopping at once");
    },
  );
});
