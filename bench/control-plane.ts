// Start-up time of each control-plane profile (binaries and images already built): spawn to ready,
// CRDs established, (full) the kwok node Ready, (node) the real node Ready and Knative Serving,
// Eventing and Traefik Available. Prints a Markdown table.
import { startControlPlane, type Profile } from "../dev/control-plane/index.ts";
import { buildNodeAssets } from "./node-assets.ts";

const RUNS = Number(process.env["BENCH_RUNS"] ?? 3);
const rows: string[] = [];
for (const profile of ["api", "full", "node"] as Profile[]) {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    if (profile === "node") buildNodeAssets();
    const started = performance.now();
    // The node profile waits minutes on a busy machine (Knative's images, its pods).
    const cp = await startControlPlane({ profile, ownerPid: process.pid, timeoutMs: 180_000 });
    times.push(performance.now() - started);
    await cp.stop();
  }
  times.sort((a, b) => a - b);
  rows.push(
    `| ${profile} | ${(times[Math.floor(times.length / 2)]! / 1000).toFixed(1)} | ${(times[0]! / 1000).toFixed(1)}–${(times.at(-1)! / 1000).toFixed(1)} |`,
  );
}
console.log(`\nControl plane start-up, ${RUNS} runs each (seconds, includes CRD installation)\n`);
console.log("| profile | median s | range s |\n|---|---|---|");
console.log(rows.join("\n"));
