// A run killed outright (SIGKILL, no teardown) while its node runs a pod leaves nothing on the
// host: no process of the node (containerd, a shim, a container, the kubelet), no link, no cgroup,
// no mount, no folder. The watchdog sees the owner gone; the kernel ends the node's namespaces.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it, onTestFinished } from "vitest";
import { eventually } from "../integration/helpers.ts";
import { startOwner } from "../owner.ts";

const launcher = fileURLToPath(new URL("../../dev/control-plane/index.ts", import.meta.url));
const script = `
  const { startControlPlane } = await import(${JSON.stringify(launcher)});
  const { readFileSync } = await import("node:fs");
  const cp = await startControlPlane({ profile: "node", ownerPid: process.pid, timeoutMs: 180_000 });
  const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "held", namespace: "default" }, spec: { automountServiceAccountToken: false,
    containers: [{ name: "c", image: "dev.local/dynamo-pool-relay:local", imagePullPolicy: "Never", env: [{ name: "FUNCTION_TARGET", value: "dead-letter" }, { name: "FUNCTION_SOURCE", value: "/app/functions/dead-letter/index.mjs" }] }] } };
  await cp.client.apply(pod, "test", { force: true });
  for (;;) {
    const got = await cp.client.get({ apiVersion: "v1", kind: "Pod", namespace: "default", name: "held" });
    if (got?.status?.phase === "Running") break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const link = readFileSync(cp.dir + "/cleanup.sh", "utf8").match(/ip link del (\\S+)/)[1];
  console.log(JSON.stringify({ pids: cp.pids, dir: cp.dir, etcd: cp.etcdData, link }));
  setInterval(() => {}, 1000);
`;

/** Every process whose `file` in /proc (cmdline, mountinfo) names `text`: a mount exists only in the namespace of a live process. */
function processesWith(file: "cmdline" | "mountinfo", text: string): string[] {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .flatMap((p) => {
      try {
        const content = readFileSync(`/proc/${p}/${file}`, "utf8").replaceAll("\0", " ");
        return content.includes(text) ? [`${p}: ${file === "cmdline" ? content : "mounts it"}`] : [];
      } catch {
        return [];
      }
    });
}

const cgroupsOf = (link: string) =>
  readdirSync("/sys/fs/cgroup").filter((h) =>
    existsSync(`/sys/fs/cgroup/${h}/poolrelay-node${link.replace("prnode", "")}`),
  );
const linkExists = (link: string) => existsSync(`/sys/class/net/${link}`);

describe("a node's hygiene", () => {
  // A second whole stack beside the suite's: up to a few minutes on 2 cores.
  it(
    "leaves no process, link, cgroup, mount or folder when its owner is killed with SIGKILL while a pod runs",
    { timeout: 420_000 },
    async () => {
      const up = await startOwner<{ pids: number[]; dir: string; etcd: string; link: string }>(script);
      onTestFinished(() => void up.owner.kill("SIGKILL"));
      // Presence first: the node's processes, mounts, link and cgroups are there while it runs.
      expect(processesWith("cmdline", up.dir).some((p) => p.includes("containerd-shim-runc-v2"))).toBe(true);
      expect(processesWith("mountinfo", up.dir).length).toBeGreaterThan(0);
      expect(linkExists(up.link)).toBe(true);
      expect(cgroupsOf(up.link).length).toBeGreaterThan(0);
      up.owner.kill("SIGKILL");
      await eventually(
        "no process names the node's folder",
        async () => processesWith("cmdline", up.dir).length === 0,
        30_000,
      );
      await eventually(
        "no mount under the node's folder is left",
        async () => processesWith("mountinfo", up.dir).length === 0,
        15_000,
      );
      await eventually("the link is gone", async () => !linkExists(up.link), 15_000);
      await eventually("the cgroups are gone", async () => cgroupsOf(up.link).length === 0, 15_000);
      await eventually("the folders are removed", async () => !existsSync(up.dir) && !existsSync(up.etcd), 15_000);
    },
  );
});
