// What a real node (control plane profile node) has on the host while it runs, read from /proc
// and /sys as test/node/hygiene.test.ts reads it, so a test can see it there first and then see
// every piece of it gone: its processes (containerd, each shim and container, the kubelet), mounts,
// network namespaces, link, cgroups and folders.
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";

export interface NodeFootprint {
  /** The control plane's folder, which every node process's command line or mounts name. */
  dir: string;
  /** etcd's data folder (in /dev/shm, outside `dir`). */
  etcd: string;
  /** The host's end of the node's veth pair. */
  link: string;
  /** The node's network namespaces (its own and each pod's), as `net:[inode]`. */
  netns: string[];
}

const pids = () => readdirSync("/proc").filter((p) => /^\d+$/.test(p));

function read(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    // The process ended while we looked.
    return "";
  }
}

/** Every process whose `file` in /proc (cmdline, mountinfo) names `text`: a mount exists only in the namespace of a live process. */
export function processesWith(file: "cmdline" | "mountinfo", text: string): string[] {
  return pids().flatMap((p) => {
    const content = read(`/proc/${p}/${file}`).replaceAll("\0", " ");
    return content.includes(text) ? [`${p}: ${file === "cmdline" ? content : "mounts it"}`] : [];
  });
}

const cgroupRoot = (link: string) => `poolrelay-node${link.replace("prnode", "")}`;

/** The node's processes: those naming its folder (its daemons, the shims) and those in its cgroups (every container's). */
function nodeProcesses(dir: string, link: string): string[] {
  return pids().filter(
    (p) => read(`/proc/${p}/cmdline`).includes(dir) || read(`/proc/${p}/cgroup`).includes(`/${cgroupRoot(link)}/`),
  );
}

function netnsOf(pid: string): string[] {
  try {
    return [readlinkSync(`/proc/${pid}/ns/net`)];
  } catch {
    return [];
  }
}

/** The footprint of the node of the control plane in `dir`, while it runs. */
export function nodeFootprint(dir: string): NodeFootprint {
  // etcd is the control plane's first process.
  const etcdPid = read(`${dir}/pids`).split(/\s+/)[0];
  const etcd = /--data-dir=(\S+)/.exec(read(`/proc/${etcdPid}/cmdline`).replaceAll("\0", " "))?.[1] ?? "";
  const link = /ip link del (\S+)/.exec(read(`${dir}/cleanup.sh`))?.[1] ?? "";
  // The control plane's own processes name the folder too, and run in the host's namespace.
  const host = netnsOf("self")[0];
  return { dir, etcd, link, netns: [...new Set(nodeProcesses(dir, link).flatMap(netnsOf))].filter((n) => n !== host) };
}

const cgroupsOf = (link: string) =>
  readdirSync("/sys/fs/cgroup").filter((h) => existsSync(`/sys/fs/cgroup/${h}/${cgroupRoot(link)}`));

/** What of the footprint is on the host now, one line a kind; [] when nothing is. */
export function leftOf(f: NodeFootprint): string[] {
  // A network namespace lives while a process is in it or a mount (nsfs) holds it.
  const inNetns = pids().filter((p) => netnsOf(p).some((n) => f.netns.includes(n)));
  const nsMounts = pids().filter((p) => f.netns.some((n) => read(`/proc/${p}/mountinfo`).includes(n)));
  const left = {
    processes: nodeProcesses(f.dir, f.link).map((p) => `${p}: ${read(`/proc/${p}/cmdline`).replaceAll("\0", " ")}`),
    shims: processesWith("cmdline", f.dir).filter((p) => p.includes("containerd-shim")),
    mounts: processesWith("mountinfo", f.dir),
    "processes in its network namespaces": inNetns,
    "mounts of its network namespaces": nsMounts,
    link: existsSync(`/sys/class/net/${f.link}`) ? [f.link] : [],
    cgroups: cgroupsOf(f.link),
    folders: [f.dir, f.etcd].filter((d) => existsSync(d)),
  };
  return Object.entries(left)
    .filter(([, v]) => v.length > 0)
    .map(([k, v]) => `${k}: ${v.join("; ")}`);
}

/** The footprint is all there: each kind present, the test's premise. */
export function present(f: NodeFootprint): string[] {
  const missing = [
    processesWith("cmdline", f.dir).some((p) => p.includes("containerd-shim-runc-v2")) ? "" : "no containerd shim",
    processesWith("mountinfo", f.dir).length > 0 ? "" : "no mount",
    f.netns.length > 1 ? "" : "no pod network namespace",
    f.etcd && existsSync(f.etcd) ? "" : "no etcd folder",
    f.link && existsSync(`/sys/class/net/${f.link}`) ? "" : "no link",
    cgroupsOf(f.link).length > 0 ? "" : "no cgroup",
  ];
  return missing.filter(Boolean);
}
