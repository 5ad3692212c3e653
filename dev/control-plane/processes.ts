/**
 * Child processes of the control plane: each in its own process group with its log in a file, so
 * stopping kills the whole group, and a watchdog that kills them all if the owner process dies
 * without stopping them (a test run killed with SIGKILL leaves nothing behind).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface Component {
  name: string;
  pid: number;
  log: string;
  child: ChildProcess;
}

export function startComponent(
  name: string,
  binary: string,
  args: string[],
  dir: string,
  env?: NodeJS.ProcessEnv,
): Component {
  const log = join(dir, `${name}.log`);
  const fd = openSync(log, "a");
  const child = spawn(binary, args, { detached: true, stdio: ["ignore", fd, fd], cwd: dir, ...(env ? { env } : {}) });
  closeSync(fd);
  if (child.pid === undefined) throw new Error(`${name} did not start: ${binary}`);
  child.unref();
  return { name, pid: child.pid, log, child };
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/** SIGTERM each group, then SIGKILL whatever is left after `graceMs`. */
/** Waits until none of the processes is alive, or the time is up. */
async function gone(pids: readonly number[], ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

/** SIGTERM, then SIGKILL after the grace period; resolves once they are gone (seen: a process of a loaded machine still alive when `cluster down` returned). */
export async function stopGroups(pids: readonly number[], graceMs = 2000): Promise<void> {
  for (const pid of pids) signalGroup(pid, "SIGTERM");
  await gone(pids, graceMs);
  for (const pid of pids) if (alive(pid)) signalGroup(pid, "SIGKILL");
  await gone(pids, graceMs);
}

/** Synchronous best effort for process exit handlers, where nothing async runs. */
export function killGroupsNow(pids: readonly number[]): void {
  for (const pid of pids) signalGroup(pid, "SIGKILL");
}

/**
 * A detached shell that polls the owner once a second and, when it is gone, kills the groups, runs
 * DIR/cleanup.sh when there is one (what a node leaves on the host), and removes the control plane's folders (etcd data lives in RAM-backed /dev/shm, and the folder
 * holds an admin token).
 * Returns the watchdog's pid, to stop it with the rest.
 */
export function startWatchdog(ownerPid: number, pidsFile: string, dir: string, removeAfter: readonly string[]): number {
  const remove = removeAfter.map((p) => `'${p}'`).join(" ");
  const script = `while kill -0 ${ownerPid} 2>/dev/null; do sleep 1; done; for p in $(cat '${pidsFile}' 2>/dev/null); do kill -KILL -- -$p 2>/dev/null; done; sleep 1; [ -f '${dir}/cleanup.sh' ] && bash '${dir}/cleanup.sh'; rm -rf ${remove}`;
  const child = spawn("bash", ["-c", script], { detached: true, stdio: "ignore", cwd: dir });
  child.unref();
  return child.pid!;
}

export function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}
