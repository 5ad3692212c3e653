// A test run killed outright (SIGKILL, no teardown) must not leave control-plane processes behind:
// the watchdog sees its owner gone and kills every process group.
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { alive } from "../../dev/control-plane/processes.ts";
import { startOwner as startOwnerOf } from "../owner.ts";
import { eventually } from "./helpers.ts";

const launcher = fileURLToPath(new URL("../../dev/control-plane/index.ts", import.meta.url));
/** Starts an owner of a control plane; `then` runs once it is up (the owner prints its pids first). */
const script = (then: string) => `
  const { startControlPlane } = await import(${JSON.stringify(launcher)});
  const cp = await startControlPlane({ profile: "api", ownerPid: process.pid });
  console.log(JSON.stringify({ pids: cp.pids, dirs: [cp.dir, cp.etcdData] }));
  ${then}
`;

const startOwner = (then: string) => startOwnerOf<{ pids: number[]; dirs: string[] }>(script(then));

describe("process hygiene", () => {
  it("kills every control-plane process when its owner exits in the middle of stopping it (a second Ctrl-C)", async () => {
    // stop() sends SIGTERM to every group, the watchdog's too, then waits: exiting right away must still leave nothing.
    const { pids, dirs } = await startOwner("void cp.stop(); setTimeout(() => process.exit(130), 50);");
    expect(pids.length).toBe(2);
    await eventually(
      "every control-plane process is gone",
      async () => pids.every((p) => !alive(p) || zombie(p)),
      15_000,
    );
    await eventually("the control plane's folders are removed", async () => dirs.every((d) => !existsSync(d)), 15_000);
  });

  it("kills every control-plane process when its owner is killed with SIGKILL", async () => {
    const { owner, pids, dirs } = await startOwner("setInterval(() => {}, 1000);");
    expect(pids.length).toBe(2);
    expect(pids.every(alive)).toBe(true);
    owner.kill("SIGKILL");
    await eventually(
      "every control-plane process is gone",
      async () => pids.every((p) => !alive(p) || zombie(p)),
      15_000,
    );
    // Its etcd data (in RAM-backed /dev/shm) and its folder with the admin token go too.
    await eventually("the control plane's folders are removed", async () => dirs.every((d) => !existsSync(d)), 15_000);
  });
});

/** A killed process whose parent died is a zombie until init reaps it: it holds nothing. */
function zombie(pid: number): boolean {
  try {
    return /\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}
