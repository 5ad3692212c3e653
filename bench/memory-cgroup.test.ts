// The memory limit the benches run a function's host process under, as a kubelet runs its container.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { serviceMemoryLimit } from "./memory-limit.ts";
import { memoryCgroup, memoryLimitBytes } from "./memory-cgroup.ts";

const MiB = 2 ** 20;

describe("a container's memory limit", () => {
  it.each([
    [{ resources: { limits: { memory: "256Mi" } } }, 256 * MiB],
    [{ resources: { limits: { memory: "1G" } } }, 1e9],
    [{ resources: { limits: { memory: "1.5Gi" } } }, 1.5 * 2 ** 30],
    [{ resources: { limits: { memory: 1048576 } } }, MiB],
    // A fraction of a byte rounds up; 0 is no limit, as for the kubelet.
    [{ resources: { limits: { memory: "100m" } } }, 1],
    [{ resources: { limits: { memory: "0" } } }, undefined],
    [{ resources: { limits: { cpu: "1" } } }, undefined],
    [{}, undefined],
  ])("of %j is %s bytes", (container, bytes) => expect(memoryLimitBytes(container)).toBe(bytes));

  it("refuses a limit that is not a quantity", () =>
    expect(() => memoryLimitBytes({ resources: { limits: { memory: "lots" } } })).toThrow('"lots" is not a quantity'));

  it("is, for the benches, the one knative/services.yaml gives the function's container", () => {
    expect(serviceMemoryLimit("eligibility")).toEqual({ text: "256Mi", bytes: 256 * MiB });
    expect(() => serviceMemoryLimit("nonesuch")).toThrow("no memory limit for poolrelay-nonesuch");
  });
});

describe("a memory cgroup", () => {
  const made = (parent: string) => readdirSync(parent).filter((e) => e.startsWith("dynamo-pool-relay-"));
  const roots: string[] = [];
  afterEach(() => roots.splice(0).forEach((r) => rmSync(r, { recursive: true, force: true })));
  /** A folder laid out as a cgroup hierarchy: `own` holds the files the kernel would give it. */
  function hierarchy(own: string, subtreeControl = "cpu memory") {
    const root = mkdtempSync(join(tmpdir(), "cgroup-"));
    roots.push(root);
    mkdirSync(join(root, own), { recursive: true });
    writeFileSync(join(root, own, "cgroup.procs"), "");
    writeFileSync(join(root, own, "cgroup.subtree_control"), `${subtreeControl}\n`);
    return root;
  }

  it.each([
    ["v1", "5:cpu,cpuacct:/other\n4:memory:/pods/a\n0::/\n", "memory/pods/a", "memory.limit_in_bytes"],
    ["v2", "1:name=systemd:/other\n0::/pods/a\n", "pods/a", "memory.max"],
  ])(
    "%s is made under this process's own, and the wrapped command runs inside it",
    (version, membership, own, limitFile) => {
      const root = hierarchy(own);
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
      // A kernel's cgroup goes with its files once its processes have; a plain folder here, only when empty.
      expect(cgroup.remove()).toBe(false);
      for (const file of readdirSync(dir)) rmSync(join(dir, file));
      expect(cgroup.remove()).toBe(true);
      expect(existsSync(dir)).toBe(false);
    },
  );

  it("removes what a process that is gone left behind, and nothing else", () => {
    const root = hierarchy("pods/a");
    const parent = join(root, "pods/a");
    // 4194305: a pid that cannot be a live process (above the kernel's maximum).
    const dead = "dynamo-pool-relay-4194305-10";
    const kept = [
      `dynamo-pool-relay-${process.pid}-99`,
      "someone-else",
      "x-dynamo-pool-relay-4194305-0",
      "dynamo-pool-relay-4194305-0-x",
    ];
    for (const entry of [dead, ...kept]) mkdirSync(join(parent, entry), { recursive: true });
    const cgroup = memoryCgroup(MiB, "0::/pods/a\n", root);
    expect("wrap" in cgroup).toBe(true);
    const left = readdirSync(parent);
    expect(left).toEqual(expect.arrayContaining(kept));
    expect(left).toHaveLength(kept.length + 3); // and the cgroup's own files
    expect(left).not.toContain(dead);
  });

  it("takes the path whole, colons and all", () => {
    const root = hierarchy("pods/a:b");
    const cgroup = memoryCgroup(MiB, "0::/pods/a:b\n", root);
    expect("wrap" in cgroup).toBe(true);
    expect(made(join(root, "pods/a:b"))).toHaveLength(1);
  });

  it.each([
    ["no folder", "0::/gone\n", () => join(tmpdir(), "no-such-root"), "is not a cgroup"],
    [
      "a folder that is not a cgroup (no cgroup.procs)",
      "0::/\n",
      () => (roots.push(mkdtempSync(join(tmpdir(), "cgroup-"))), roots.at(-1)!),
      "is not a cgroup",
    ],
    [
      "a v2 cgroup whose children have no memory controller",
      "0::/pods/a\n",
      () => hierarchy("pods/a", "cpu io"),
      "the memory controller is not enabled",
    ],
    ["a system without /proc/self/cgroup", null, () => tmpdir(), "has no /proc/self/cgroup"],
  ])("says why where none can be made: %s", (_, membership, root, why) => {
    const cgroup = memoryCgroup(MiB, membership, root());
    expect(cgroup).toEqual({ why: expect.stringContaining(why) as unknown });
  });
});
