// The memory limit `npm run bench:scale` runs each function under, as its Knative Service's pod.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { memoryLimit, serviceMemoryLimit } from "../../bench/memory-limit.ts";

describe("the benches' memory limit", () => {
  it("is the limit knative/services.yaml gives the function's container", () => {
    expect(serviceMemoryLimit("eligibility")).toEqual({ text: "256Mi", bytes: 256 * 2 ** 20 });
    expect(() => serviceMemoryLimit("nonesuch")).toThrow("no memory limit for poolrelay-nonesuch");
  });

  it.each([
    ["v1", "4:memory:/pods/a\n0::/\n", "memory/pods/a", "memory.limit_in_bytes"],
    ["v2", "0::/pods/a\n", "pods/a", "memory.max"],
  ])("makes a cgroup %s under this process's own, and the wrapped command runs inside it", (version, membership, own, file) => {
    const root = mkdtempSync(join(tmpdir(), "cgroup-"));
    mkdirSync(join(root, own), { recursive: true });
    const limit = memoryLimit(256 * 2 ** 20, membership, root);
    if (!("wrap" in limit)) throw new Error(limit.why);
    expect(limit.how).toBe(`a memory cgroup (${version}) of 256 MiB`);
    const { command, args } = limit.wrap(["/bin/sh", "-c", "echo $$"]);
    const ran = spawnSync(command, args, { encoding: "utf8" });
    expect(ran.status).toBe(0);
    const [made] = readdirSync(join(root, own));
    const cgroups = join(root, own, made!);
    expect(made).toMatch(new RegExp(`^dynamo-pool-relay-bench-${process.pid}-\\d+$`));
    expect(readFileSync(join(cgroups, file), "utf8")).toBe(String(256 * 2 ** 20));
    // The command became the process the shell put in the cgroup: the same pid.
    expect(readFileSync(join(cgroups, "cgroup.procs"), "utf8").trim()).toBe(ran.stdout.trim());
  });

  it("says why where no cgroup can be made", () => {
    const limit = memoryLimit(1, "0::/gone\n", join(tmpdir(), "no-such-root"));
    expect(limit).toEqual({ why: expect.stringContaining("no memory cgroup") });
  });
});
