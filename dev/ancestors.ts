/**
 * The processes a long-running command was started under (npm, its shell, the user's shell...),
 * so it can stop when any of them is gone. A supervisor or a CI timeout signals npm alone; npm
 * passes the signal to its shell, which dies without passing it on, and the command, re-parented,
 * would run on with everything it started. Linux (/proc); elsewhere only the parent is watched.
 */
import { readFileSync } from "node:fs";

export interface ProcessId {
  pid: number;
  /** Start time in clock ticks since boot: tells a PID's reuse from the process itself. */
  start: string;
}

/** ppid and start time from a /proc/PID/stat line; the command name may hold spaces and parentheses. */
export function parseStat(line: string): { ppid: number; start: string } | undefined {
  const fields = line.slice(line.lastIndexOf(")") + 2).split(" ");
  // After the name: state(3) ppid(4) ... starttime(22), numbered from pid = 1.
  const ppid = Number(fields[1]);
  const start = fields[19];
  return Number.isInteger(ppid) && start !== undefined ? { ppid, start } : undefined;
}

function stat(pid: number): { ppid: number; start: string } | undefined {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}

/** This process's ancestors, nearest first, up to (not including) init. */
export function ancestors(pid = process.pid): ProcessId[] {
  const out: ProcessId[] = [];
  for (let s = stat(pid); s && s.ppid > 1; ) {
    const parent = stat(s.ppid);
    if (!parent) break;
    out.push({ pid: s.ppid, start: parent.start });
    s = parent;
  }
  return out;
}

/** Calls `gone` once, when an ancestor found now has exited (or the parent changed); returns the stop of the watch. */
export function onAncestorGone(gone: () => void, periodMs = 500): () => void {
  const parent = process.ppid;
  const watched = ancestors();
  const timer = setInterval(() => {
    if (process.ppid !== parent || watched.some((a) => stat(a.pid)?.start !== a.start)) {
      clearInterval(timer);
      gone();
    }
  }, periodMs);
  timer.unref();
  return () => clearInterval(timer);
}
