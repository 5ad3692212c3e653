// The memory limit the local kubelet and the benches run a container's process under.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { serviceMemoryLimit } from "../../bench/memory-limit.ts";
import { memoryCgroup, memoryLimitBytes } from "./memory-cgroup.ts";

const MiB = 2 ** 20;

describe("a container's memory limit", () => {
  it.each([
    [{ resources: { limits: { memory: "256Mi" } } }, 256 * MiB],
    [{ resources: { limits: { memory: "1G" } } }, 1e9],
    [{ resources: { limits: { memory: "1.5Gi" } } }, 1.5 * 2 ** 30],
    [{ resources: { limits: { memory: 1048576 } } }, MiB],
    [{ resources: { limits: { cpu: "1" } } }, undefined],
    [{}, undefined],
  ])("of %j is %s bytes", (container, bytes) => expect(memoryLimitBytes(container)).toBe(bytes));

  it("refuses a limit that is not a quantity", () => expect(() => memoryLimitBytes({ resources: { limits: { memory: "lots" } } })).toThrow('"lots" is not a quantity'));

  it("is, for the benches, the one knative/services.yaml gives the function's container", () => {
    expect(serviceMemoryLimit("eligibility")).toEqual({ text: "256Mi", bytes: 256 * MiB });
    expect(() => serviceMemoryLimit("nonesuch")).toThrow("no memory limit for poolrelay-nonesuch");
  });
});

describe("a memory cgroup", () => {
  const made = (parent: string) => readdirSync(parent).filter((e) => e.startsWith("dynamo-pool-relay-"));

  it.each([
    ["v1", "5:cpu,cpuacct:/other\n4:memory:/pods/a\n0::/\n", "memory/pods/a", "memory.limit_in_bytes", "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 12\n"],
    ["v2", "1:name=systemd:/other\n0::/pods/a\n", "pods/a", "memory.max", "memory.events", "low 0\nhigh 0\nmax 40\noom 13\noom_kill 12\noom_group_kill 0\n"],
  ])("%s is made under this process's own, and the wrapped command runs inside it", (version, membership, own, limitFile, eventsFile, events) => {
    const root = mkdtempSync(join(tmpdir(), "cgroup-"));
    mkdirSync(join(root, own), { recursive: true });
    const cgroup = memoryCgroup(256 * MiB, membership, root);
    if (!("wrap" in cgroup)) throw new Error(cgroup.why);
    expect(cgroup.how).toBe(`a memory cgroup (${version}) of 256 MiB`);
    const { command, args } = cgroup.wrap(["/bin/sh", "-c", "echo $$"]);
    const ran = spawnSync(command, args, { encoding: "utf8" });
    expect(ran.status).toBe(0);
    const [name] = made(join(root, own));
    expect(name).toMatch(new RegExp(`^dynamo-pool-relay-${process.pid}-\\d+$`));
    const dir = join(root, own, name!);
    expect(readFileSync(join(dir, limitFile), "utf8")).toBe(String(256 * MiB));
    // The command became the process the shell put in the cgroup: the same pid.
    expect(readFileSync(join(dir, "cgroup.procs"), "utf8").trim()).toBe(ran.stdout.trim());
    expect(cgroup.oomKills()).toBe(0);
    writeFileSync(join(dir, eventsFile), events);
    expect(cgroup.oomKills()).toBe(12);
    // A kernel's cgroup goes with its files once its processes have; a plain folder here, only when empty.
    expect(cgroup.remove()).toBe(false);
    for (const file of readdirSync(dir)) rmSync(join(dir, file));
    expect(cgroup.remove()).toBe(true);
    expect(existsSync(dir)).toBe(false);
  });

  it("removes what a process that is gone left behind, and nothing else", () => {
    const root = mkdtempSync(join(tmpdir(), "cgroup-"));
    const parent = join(root, "pods/a");
    // 4194305: a pid that cannot be a live process (above the kernel's maximum).
    const dead = "dynamo-pool-relay-4194305-10";
    const kept = [`dynamo-pool-relay-${process.pid}-99`, "someone-else", "x-dynamo-pool-relay-4194305-0", "dynamo-pool-relay-4194305-0-x"];
    for (const entry of [dead, ...kept]) mkdirSync(join(parent, entry), { recursive: true });
    const cgroup = memoryCgroup(MiB, "0::/pods/a\n", root);
    expect("wrap" in cgroup).toBe(true);
    const left = readdirSync(parent);
    expect(left).toEqual(expect.arrayContaining(kept));
    expect(left).toHaveLength(kept.length + 1);
    expect(left).not.toContain(dead);
  });

  it("says why where none can be made", () => {
    const cgroup = memoryCgroup(1, "0::/gone\n", join(tmpdir(), "no-such-root"));
    expect(cgroup).toEqual({ why: expect.stringContaining("no memory cgroup can be made here") });
  });
});
