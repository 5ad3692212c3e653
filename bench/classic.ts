// The classic controller-runtime operator (bench/classic/), the benchmarks' peer of the product:
// buildClassic() builds it with `go build` into the cache folder, once per version of its sources;
// startClassic() runs it against a cluster, watching one namespace, and stop() ends it with SIGTERM
// and returns the API requests it counted (the JSON line it prints on SIGTERM) and the CPU it used.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const SOURCES = fileURLToPath(new URL("./classic/", import.meta.url));

function cacheDir(): string {
  return join(
    process.env["POOLRELAY_CACHE_DIR"] ??
      join(process.env["XDG_CACHE_HOME"] ?? join(homedir(), ".cache"), "dynamo-pool-relay"),
    "classic",
  );
}

/** A hash of what the binary is built from: go.mod, go.sum and every non-test .go file, and the Go version. */
function sourcesHash(): string {
  const hash = createHash("sha256");
  const files = readdirSync(SOURCES)
    .filter((f) => f === "go.mod" || f === "go.sum" || (f.endsWith(".go") && !f.endsWith("_test.go")))
    .sort();
  for (const f of files)
    hash
      .update(`${f}\0`)
      .update(readFileSync(join(SOURCES, f)))
      .update("\0");
  const go = spawnSync("go", ["version"], { encoding: "utf8" });
  hash.update(go.stdout ?? "");
  return hash.digest("hex").slice(0, 16);
}

/**
 * Builds the operator unless a build of the same sources is in the cache (a cold build of
 * controller-runtime takes minutes on 2 cores; the modules come from the Go module proxy), and
 * returns the binary's path.
 */
export async function buildClassic(): Promise<string> {
  const dir = join(cacheDir(), sourcesHash());
  const binary = join(dir, "classic");
  if (existsSync(binary)) return binary;
  mkdirSync(dir, { recursive: true });
  const staged = `${binary}.${process.pid}.tmp`;
  const code = await new Promise<number | null>((resolve, reject) => {
    const go = spawn("go", ["build", "-o", staged, "."], {
      cwd: SOURCES,
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, CGO_ENABLED: "0", GOTOOLCHAIN: "local", GOFLAGS: "-mod=readonly -buildvcs=false" },
    });
    go.on("error", reject);
    go.on("exit", resolve);
  });
  if (code !== 0) {
    rmSync(staged, { force: true });
    throw new Error(`go build of bench/classic exited ${code}; see the messages above`);
  }
  renameSync(staged, binary);
  return binary;
}

/** What the operator printed on SIGTERM (bench/classic/counter.go, report), with the CPU it used. */
export interface ClassicReport {
  /** API requests it sent: every request of its client, informers and discovery. */
  requests: number;
  /** By the API server's verb: get, list, watch, create, update, patch, delete. */
  byVerb: Record<string, number>;
  /**
   * User + system CPU of the process, from /proc/<pid>/stat (utime + stime, all threads) read
   * just before SIGTERM: the work up to the stop, not the shutdown.
   */
  cpuSeconds: number;
  /** The whole line: also byStatus, discovery, reconciles, conflicts, childApplies, serviceDeletes, statusWrites, and cpuSeconds by getrusage at exit. */
  line: Record<string, unknown>;
}

export interface ClassicOptions {
  /** More flags, e.g. `--max-concurrent-reconciles=8` or `--kube-api-qps=20 --kube-api-burst=30`. */
  args?: readonly string[];
  /** Each line the operator logs (stderr); by default the last 50 are kept for an error message. */
  log?: (line: string) => void;
}

export interface Classic {
  pid: number;
  stop(): Promise<ClassicReport>;
}

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  clockTicks ??= Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout?.trim()) || 100;
  return clockTicks;
}

/** utime + stime of a process, in seconds; undefined once it is gone. */
export function procCpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces: the fields after it follow its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 14 and 15 of proc(5), utime and stime, are the 12th and 13th after the name.
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond();
  } catch {
    return undefined;
  }
}

export function startClassic(
  binary: string,
  kubeconfig: string,
  namespace: string,
  options: ClassicOptions = {},
): Classic {
  const child = spawn(binary, [`--kubeconfig=${kubeconfig}`, `--namespace=${namespace}`, ...(options.args ?? [])], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  const tail: string[] = [];
  let partial = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      options.log?.(line);
      tail.push(line);
      if (tail.length > 50) tail.shift();
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  const failed = new Promise<never>((_, reject) => child.on("error", reject));
  failed.catch(() => {}); // reported by stop()
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${binary}`);

  return {
    pid,
    async stop(): Promise<ClassicReport> {
      const cpuSeconds = procCpuSeconds(pid);
      if (child.exitCode !== null || child.signalCode !== null || cpuSeconds === undefined) {
        throw new Error(
          `the classic operator had already exited (${child.exitCode ?? child.signalCode}); its last log lines:\n${tail.join("\n")}`,
        );
      }
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      const { code, signal } = await Promise.race([exited, failed]).finally(() => clearTimeout(timer));
      const lineText = stdout
        .split("\n")
        .reverse()
        .find((l) => l.startsWith("{") && l.includes('"requests"'));
      if (code !== 0 || lineText === undefined) {
        throw new Error(
          `the classic operator exited ${code ?? signal} without its report; its last log lines:\n${tail.join("\n")}`,
        );
      }
      const line = JSON.parse(lineText) as { requests: number; byVerb: Record<string, number> } & Record<
        string,
        unknown
      >;
      return { requests: line.requests, byVerb: line.byVerb, cpuSeconds, line };
    },
  };
}
