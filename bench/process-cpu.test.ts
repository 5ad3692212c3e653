// The per-process CPU reading of bench/process-cpu.ts on a made-up /proc: names, ticks, and the
// difference of two readings by name.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cpuByName, processCpu } from "./process-cpu.ts";

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

/** A /proc with the given processes: argv, environment, and user and system ticks. */
function fakeProc(
  processes: Record<
    string,
    { argv: string[]; env?: string[]; comm?: string; utime: number; stime: number; start?: number }
  >,
): string {
  const root = mkdtempSync(join(tmpdir(), "proc-"));
  dirs.push(root);
  mkdirSync(join(root, "self"));
  for (const [pid, p] of Object.entries(processes)) {
    mkdirSync(join(root, pid));
    writeFileSync(join(root, pid, "cmdline"), p.argv.map((a) => `${a}\0`).join(""));
    writeFileSync(join(root, pid, "environ"), (p.env ?? []).map((e) => `${e}\0`).join(""));
    writeFileSync(join(root, pid, "comm"), `${p.comm ?? "x"}\n`);
    // A command with a space and a parenthesis in it, as the kernel writes it: fields are counted after the last ')'.
    writeFileSync(
      join(root, pid, "stat"),
      `${pid} (a b) c) S 1 ${pid} ${pid} 0 -1 4194560 0 0 0 0 ${p.utime} ${p.stime} 0 0 20 0 1 0 ${p.start ?? 0} 0 0\n`,
    );
  }
  return root;
}

describe("processCpu", () => {
  it("names a process by its executable, a node process by its script and Knative Service, a kernel thread by its comm", () => {
    const proc = fakeProc({
      "10": { argv: ["/usr/local/bin/kube-apiserver", "--etcd-servers=x"], utime: 250, stime: 50 },
      "11": {
        argv: ["node", "--enable-source-maps", "/app/main.mjs"],
        env: ["A=1", "K_SERVICE=poolrelay-apply"],
        utime: 100,
        stime: 20,
      },
      "12": { argv: [], comm: "kworker/0:1", utime: 3, stime: 0, start: 77 },
    });
    expect(processCpu(proc)).toEqual(
      new Map([
        ["10@0", { name: "kube-apiserver", seconds: 3 }],
        ["11@0", { name: "node main.mjs (poolrelay-apply)", seconds: 1.2 }],
        ["12@77", { name: "kworker/0:1", seconds: 0.03 }],
      ]),
    );
  });
});

describe("cpuByName", () => {
  const at = (name: string, seconds: number) => ({ name, seconds });
  it("sums the processes of a name, counts a new one whole, and leaves out what used next to nothing", () => {
    const before = new Map([
      ["5@1", at("etcd", 10)],
      ["7@2", at("node main.mjs (poolrelay-apply)", 1)],
    ]);
    const after = new Map([
      ["5@1", at("etcd", 14)],
      ["7@2", at("node main.mjs (poolrelay-apply)", 3)],
      ["9@3", at("node main.mjs (poolrelay-apply)", 2.5)],
      ["11@4", at("sleep", 0.01)],
    ]);
    expect(cpuByName(before, after)).toEqual([
      ["node main.mjs (poolrelay-apply)", 4.5],
      ["etcd", 4],
    ]);
  });

  it("counts only what a process used since the first reading when its name changed meanwhile, and a reused pid whole", () => {
    const before = new Map([
      ["47@9", at("kworker/1:1H-kblockd", 110)],
      ["60@5", at("sleep", 1)],
    ]);
    const after = new Map([
      ["47@9", at("kworker/1:1H-events_highpri", 119)],
      ["60@800", at("etcd", 2)],
    ]);
    expect(cpuByName(before, after)).toEqual([
      ["kworker/1:1H-events_highpri", 9],
      ["etcd", 2],
    ]);
  });
});
