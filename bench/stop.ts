// npm run bench:stop: how long the built entry point takes to go after SIGTERM as PID 1 (in a PID
// namespace of its own, as in its pod), idle, serving each function in turn. Root only (unshare).
// Prints a Markdown table; numbers are measurements of this machine.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";
import { freePort } from "../dev/control-plane/ports.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const RUNS = Number(process.env["BENCH_RUNS"] ?? 10);
const FUNCTIONS = ["eligibility", "apply", "status", "dead-letter"];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => resolve(true)).once("error", () => resolve(false));
    socket.once("connect", () => socket.destroy());
  });
}

/** Milliseconds from SIGTERM to the exit of `target` served as PID 1 on `port`. */
async function stopMs(target: string, port: number): Promise<number> {
  const argv = [
    "--pid",
    "--fork",
    "--kill-child",
    "--",
    process.execPath,
    `${root}dist/functions/main.mjs`,
    `--target=${target}`,
    `--source=${root}dist/functions/${target}/index.mjs`,
    `--port=${port}`,
  ];
  // No API server: the function's preconnect fails quietly, as in a pod before its first event.
  const child = spawn("unshare", argv, {
    env: { ...process.env, NODE_ENV: "production", KUBECONFIG: "/nonexistent" },
    stdio: "ignore",
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const gaveUp = performance.now() + 10_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || performance.now() > gaveUp)
      throw new Error(`${target} never listened on ${port} (exit code ${child.exitCode})`);
    await sleep(20);
  }
  const [pid] = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim().split(/\s+/).map(Number);
  const start = performance.now();
  process.kill(pid!, "SIGTERM");
  const code = await Promise.race([exited, sleep(30_000).then(() => "timeout" as const)]);
  if (code !== 0) {
    child.kill("SIGKILL");
    throw new Error(`${target} as PID 1 did not exit 0 after SIGTERM: ${code}`);
  }
  return performance.now() - start;
}

console.log(`| function | SIGTERM to exit, idle, as PID 1 (median of ${RUNS}) | max |\n|---|---|---|`);
for (const target of FUNCTIONS) {
  const times: number[] = [];
  for (let run = 0; run < RUNS; run++) times.push(await stopMs(target, await freePort()));
  times.sort((a, b) => a - b);
  console.log(`| ${target} | ${times[Math.floor(RUNS / 2)]!.toFixed(1)} ms | ${times.at(-1)!.toFixed(1)} ms |`);
}
