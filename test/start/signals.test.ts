// `npm start` stops everything it started, in order, when only npm is signalled (as a supervisor,
// a CI timeout or `kill PID` does) and on a terminal's Ctrl-C, which signals the whole group.
// Each case runs a real `npm start` (control plane, Knative, the product) on this host, so this
// file runs on its own (vitest.start.config.ts), never beside the other suites' control planes.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

async function until<T>(what: string, probe: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("npm start, signalled", () => {
  it.each([
    { signal: "SIGTERM", to: "npm" },
    { signal: "SIGINT", to: "npm" },
    { signal: "SIGKILL", to: "npm" },
    // A terminal's Ctrl-C: the whole process group, so the start process gets it from the terminal and again from npm.
    { signal: "SIGINT", to: "group" },
  ] as const)("stops the control plane, Knative and the functions on $signal to the $to", async ({ signal, to }) => {
    const cacheHome = mkdtempSync(join(tmpdir(), "poolrelay-start-"));
    const env = {
      ...process.env,
      // Its own state file; the binaries from the usual cache.
      XDG_CACHE_HOME: cacheHome,
      POOLRELAY_CACHE_DIR: process.env["POOLRELAY_CACHE_DIR"] ?? join(process.env["XDG_CACHE_HOME"] ?? join(homedir(), ".cache"), "dynamo-pool-relay"),
    };
    // Its own process group, so that nothing sent to it reaches this test's process.
    const npm = spawn("npm", ["start", "--", "--no-samples"], { cwd: root, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    npm.stdout.on("data", (c: Buffer) => (output += c.toString()));
    npm.stderr.on("data", (c: Buffer) => (output += c.toString()));
    const stateFile = join(cacheHome, "dynamo-pool-relay", "start.json");
    const state = await until("npm start is up", () => {
      if (npm.exitCode !== null) throw new Error(`npm start exited ${npm.exitCode}:\n${output}`);
      return existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, "utf8")) as { pid: number; kubeconfig: string }) : undefined;
    }, 240_000);
    const cpDir = dirname(state.kubeconfig);
    const groups = readFileSync(join(cpDir, "pids"), "utf8").split(/\s+/).filter(Boolean).map(Number);
    // Presence first: the start process, its control plane's process groups and its folder.
    expect(alive(state.pid)).toBe(true);
    expect(groups.length).toBeGreaterThan(3);
    expect(groups.every(alive)).toBe(true);

    process.kill(to === "npm" ? npm.pid! : -npm.pid!, signal);
    await until("everything npm start started has stopped", () => (!alive(state.pid) && !groups.some(alive) && !existsSync(cpDir) ? true : undefined), 60_000)
      .catch((err: Error) => {
        throw new Error(`${err.message}: start process ${alive(state.pid) ? "alive" : "gone"}, ${groups.filter(alive).length} of ${groups.length} groups alive, ${existsSync(cpDir) ? "folder left" : "folder gone"}\n${output}`);
      });
    // It stopped in order, as on one Ctrl-C, not at once nor by the watchdog: its state file is gone too.
    expect(existsSync(stateFile)).toBe(false);
    expect(output).not.toContain("stopping at once");
  }, 360_000);
});
