/**
 * The node's log agent: the kubelet writes each container's output under its podLogsDir
 * (`<namespace>_<pod>_<uid>/<container>/<restart>.log`, CRI format) and deletes it with the pod,
 * and Knative deletes a function's pod once it is idle. This copies every line, CRI prefix
 * stripped, to `<to>/<namespace>/<pod>/<container>.log` as it comes, so a function's logs outlive
 * its pod, as a cluster's log agent keeps them.
 */
import { appendFileSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

export interface CriLine {
  time: string;
  stream: "stdout" | "stderr";
  /** The runtime split a long line: this piece continues in the next one. */
  partial: boolean;
  text: string;
}

/** One line of a CRI log file: `<RFC3339Nano time> <stdout|stderr> <tags> <text>`, tags `:`-separated, the first P or F. */
export function parseCriLine(line: string): CriLine | undefined {
  const m = /^(\S+) (stdout|stderr) ([PF])(?::\S*)? (.*)$/s.exec(line);
  if (!m) return undefined;
  return { time: m[1]!, stream: m[2] as CriLine["stream"], partial: m[3] === "P", text: m[4]! };
}

export interface ContainerLog {
  namespace: string;
  pod: string;
  container: string;
}

/** Whose log a file under podLogsDir is, from its path there; undefined for what is no container's current log (a rotated file). */
export function containerOf(relative: string): ContainerLog | undefined {
  const m = /^([a-z0-9-]+)_([a-z0-9.-]+)_[a-f0-9-]+\/([a-z0-9-]+)\/\d+\.log$/.exec(relative);
  return m ? { namespace: m[1]!, pod: m[2]!, container: m[3]! } : undefined;
}

/** Where a container's lines are kept: one file for all its restarts. */
export function keptLog(to: string, c: ContainerLog): string {
  return join(to, c.namespace, c.pod, `${c.container}.log`);
}

interface Followed {
  ino: number;
  offset: number;
  /** The start of a line the runtime split, waiting for its end. */
  pending: string;
}

export interface PodLogs {
  /** Copies what is new in every log file now. */
  sweep(): void;
  /** A last sweep, then no more. */
  stop(): void;
}

/** Follows `from` (the kubelet's podLogsDir), polling every `everyMs`; `onLine` sees each whole line as it is kept. */
export function followPodLogs(
  from: string,
  to: string,
  onLine: (c: ContainerLog, text: string) => void = () => {},
  everyMs = 250,
): PodLogs {
  const followed = new Map<string, Followed>();

  const copy = (file: string, state: Followed, c: ContainerLog) => {
    const fresh = readFrom(file, state.offset);
    const complete = fresh.lastIndexOf(0x0a) + 1;
    state.offset += complete;
    const kept: string[] = [];
    for (const raw of fresh.subarray(0, complete).toString("utf8").split("\n").slice(0, -1)) {
      const line = parseCriLine(raw);
      if (!line) continue;
      if (line.partial) {
        state.pending += line.text;
        continue;
      }
      kept.push(state.pending + line.text);
      state.pending = "";
    }
    if (kept.length === 0) return;
    const target = keptLog(to, c);
    mkdirSync(dirname(target), { recursive: true });
    appendFileSync(target, kept.map((l) => `${l}\n`).join(""));
    for (const l of kept) onLine(c, l);
  };

  const sweep = () => {
    const seen = new Set<string>();
    for (const relative of logFiles(from)) {
      const c = containerOf(relative);
      if (!c) continue;
      const file = join(from, relative);
      const ino = inode(file);
      if (ino === undefined) continue;
      seen.add(relative);
      let state = followed.get(relative);
      if (state && state.ino !== ino) {
        // Rotated: the kubelet renamed the file we read to <name>.<time> beside it; its rest first.
        const rotated = readdirSync(dirname(file))
          .map((f) => join(dirname(file), f))
          .find((f) => inode(f) === state!.ino);
        if (rotated) copy(rotated, state, c);
        state = undefined;
      }
      if (!state) followed.set(relative, (state = { ino, offset: 0, pending: "" }));
      copy(file, state, c);
    }
    // A deleted pod's files are gone: what was read of them is kept, nothing more will come. (A
    // file missing while its folder stays is mid-rotation: its state finds the renamed file.)
    for (const relative of followed.keys())
      if (!seen.has(relative) && !existsSync(dirname(join(from, relative)))) followed.delete(relative);
  };

  const timer = setInterval(sweep, everyMs);
  return {
    sweep,
    stop: () => {
      clearInterval(timer);
      sweep();
    },
  };
}

/** Every file two folders down in `dir` (pod/container/file), none while it does not exist. */
function logFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const below = (d: string) => {
    try {
      return readdirSync(join(dir, d)).map((f) => (d ? `${d}/${f}` : f));
    } catch {
      // Removed with its pod while we looked.
      return [];
    }
  };
  return below("").flatMap(below).flatMap(below);
}

function inode(file: string): number | undefined {
  try {
    return statSync(file).ino;
  } catch {
    return undefined;
  }
}

/** The bytes of `file` from `offset` on; none if it went in the meantime. */
function readFrom(file: string, offset: number): Buffer {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return Buffer.alloc(0);
  }
  try {
    const chunks: Buffer[] = [];
    for (let at = offset; ;) {
      const chunk = Buffer.alloc(1 << 16);
      const n = readSync(fd, chunk, 0, chunk.length, at);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      at += n;
    }
    return Buffer.concat(chunks);
  } finally {
    closeSync(fd);
  }
}
