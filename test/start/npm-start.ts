// A real `npm start` (or `poolrelay` command) in its own process group, with its own state folder,
// as the start suite runs them.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, onTestFinished } from "vitest";
import { leftOf, nodeFootprint, present } from "../node-leftovers.ts";

export const root = fileURLToPath(new URL("../../", import.meta.url));

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

export async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** An environment with its own state folder (XDG_CACHE_HOME) and the binaries from the usual cache; call it inside a test. */
export function isolatedEnv(): { env: NodeJS.ProcessEnv; cacheHome: string } {
  const cacheHome = mkdtempSync(join(tmpdir(), "poolrelay-start-"));
  // Only state files live here (the binaries stay in the usual cache): gone with the test.
  onTestFinished(() => rmSync(cacheHome, { recursive: true, force: true }));
  const env = {
    ...process.env,
    XDG_CACHE_HOME: cacheHome,
    POOLRELAY_CACHE_DIR:
      process.env["POOLRELAY_CACHE_DIR"] ??
      join(process.env["XDG_CACHE_HOME"] ?? join(homedir(), ".cache"), "dynamo-pool-relay"),
  };
  return { env, cacheHome };
}

export interface Started {
  npm: ChildProcess;
  output: () => string;
  stateFile: string;
  /** The start process (npm execs it through the script's shell). */
  pid: number;
  /** Its control plane's folder. */
  dir: string;
}

export interface Up extends Started {
  state: { pid: number; kubeconfig: string; broker: string; tap: string; logs: string };
}

function spawnStart(args: string[]): Omit<Started, "pid" | "dir"> {
  const { env, cacheHome } = isolatedEnv();
  // Its own process group, so that nothing sent to it reaches this test's process.
  const npm = spawn("npm", ["start", "--", ...args], {
    cwd: root,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  npm.stdout.on("data", (c: Buffer) => (output += c.toString()));
  npm.stderr.on("data", (c: Buffer) => (output += c.toString()));
  // A case that failed before it stopped npm start: its group killed, the control plane's watchdog
  // stops the rest, so the next case does not start beside it.
  onTestFinished(() => {
    try {
      process.kill(-npm.pid!, "SIGKILL");
    } catch {
      // Gone already: the case stopped it.
    }
  });
  return { npm, output: () => output, stateFile: join(cacheHome, "dynamo-pool-relay", "start.json") };
}

/** `until`, failing at once with npm start's output if it exits first. */
function whileRunning<T>(
  run: Omit<Started, "pid" | "dir">,
  what: string,
  probe: () => T | undefined,
  timeoutMs: number,
): Promise<T> {
  return until(
    what,
    () => {
      if (run.npm.exitCode !== null) throw new Error(`npm start exited ${run.npm.exitCode}:\n${run.output()}`);
      return probe();
    },
    timeoutMs,
  );
}

/** `npm start -- ...args`, resolved once its state file is written (the control plane and the product are up). */
export async function npmStart(args: string[]): Promise<Up> {
  const run = spawnStart(args);
  // A node, Knative Serving and Eventing and the product, all pods, on 2 cores: a few minutes.
  const state = await whileRunning(
    run,
    "npm start is up",
    () => (existsSync(run.stateFile) ? (JSON.parse(readFileSync(run.stateFile, "utf8")) as Up["state"]) : undefined),
    420_000,
  );
  return { ...run, state, pid: state.pid, dir: dirname(state.kubeconfig) };
}

/**
 * `npm start -- ...args`, resolved once it says its control plane, node and Knative are up: it is
 * then installing the product, which a signal interrupts.
 */
export async function npmStarting(args: string[]): Promise<Started> {
  const run = spawnStart(args);
  const dir = await whileRunning(
    run,
    "npm start's control plane, node and Knative are up",
    () =>
      /\ncontrol plane, node and Knative up in [\d.]+ s; their logs and kubeconfig in (\S+)\n/.exec(run.output())?.[1],
    300_000,
  );
  // npm's one child: `exec` takes the script's shell to the start process.
  const children = readFileSync(`/proc/${run.npm.pid}/task/${run.npm.pid}/children`, "utf8").trim().split(/\s+/);
  expect(children).toHaveLength(1);
  const pid = Number(children[0]);
  expect(readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ")).toContain("bin/poolrelay.js start");
  return { ...run, pid, dir };
}

export type Signalled = { signal: "SIGTERM" | "SIGINT" | "SIGKILL"; to: "npm" | "group" | "start" };

/**
 * Sends `signal` to npm, its process group (a terminal's Ctrl-C) or the start process, and checks
 * that nothing npm start started is left on the host: the start process, its control plane's
 * process groups, and every kind of the node's footprint (test/node-leftovers.ts). Unless the start
 * process itself was killed (its control plane's watchdog then stops the rest), it stopped in
 * order, as on one Ctrl-C: its state file is gone too.
 */
export async function signalAndCheck(run: Started, { signal, to }: Signalled): Promise<void> {
  const groups = readFileSync(join(run.dir, "pids"), "utf8").split(/\s+/).filter(Boolean).map(Number);
  const footprint = nodeFootprint(run.dir);
  // Presence first: the start process, its control plane's process groups, and every kind of the node's footprint.
  expect(alive(run.pid)).toBe(true);
  expect(groups.length).toBeGreaterThan(3);
  expect(groups.every(alive)).toBe(true);
  expect(present(footprint)).toEqual([]);

  process.kill(to === "npm" ? run.npm.pid! : to === "group" ? -run.npm.pid! : run.pid, signal);
  await until(
    "nothing npm start started is left",
    () => (!alive(run.pid) && !groups.some(alive) && leftOf(footprint).length === 0 ? true : undefined),
    90_000,
  ).catch((err: Error) => {
    throw new Error(
      `${err.message}: start process ${alive(run.pid) ? "alive" : "gone"}, ${groups.filter(alive).length} of ${groups.length} groups alive\n${leftOf(footprint).join("\n")}\n${run.output()}`,
    );
  });
  if (to === "start") return;
  expect(existsSync(run.stateFile)).toBe(false);
  expect(run.output()).toContain("\nstopped\n");
  expect(run.output()).not.toContain("stopping at once");
}
