// A real `npm start` (or `poolrelay` command) in its own process group, with its own state folder,
// as the start suite runs them.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { onTestFinished } from "vitest";

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
  state: { pid: number; kubeconfig: string; broker: string; tap: string; logs: string };
}

/** `npm start -- ...args`, resolved once its state file is written (the control plane and the product are up). */
export async function npmStart(args: string[]): Promise<Started> {
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
  const stateFile = join(cacheHome, "dynamo-pool-relay", "start.json");
  const state = await until(
    "npm start is up",
    () => {
      if (npm.exitCode !== null) throw new Error(`npm start exited ${npm.exitCode}:\n${output}`);
      return existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, "utf8")) as Started["state"]) : undefined;
      // A node, Knative Serving and Eventing and the product, all pods, on 2 cores: a few minutes.
    },
    420_000,
  );
  return { npm, output: () => output, stateFile, state };
}
