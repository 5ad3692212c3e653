/**
 * Who listens on a TCP port of this host, from /proc (Linux): the InMemoryChannel dispatcher binds
 * :8080 and :8443 itself and only logs when it cannot, so the launcher checks before and after.
 */
import { readFileSync, readdirSync, readlinkSync } from "node:fs";
import { createServer } from "node:net";

/** True when nothing listens on the port on any address (a dual-stack bind succeeds). */
export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen({ port, host: "::", ipv6Only: false, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** Socket inodes of listening sockets on the port, from the kernel's tables. */
export function listeningInodes(port: number, tables: readonly string[]): Set<string> {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  const inodes = new Set<string>();
  for (const table of tables) {
    for (const line of table.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; state 0A is LISTEN; the inode is column 10.
      if (f.length > 9 && f[1]!.endsWith(`:${hex}`) && f[3] === "0A") inodes.add(f[9]!);
    }
  }
  return inodes;
}

function read(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

export interface Holder {
  pid: number;
  command: string;
}

/** The processes that hold a listening socket on the port (empty when none is found). */
export function portHolders(port: number): Holder[] {
  const inodes = listeningInodes(port, [read("/proc/net/tcp"), read("/proc/net/tcp6")]);
  if (inodes.size === 0) return [];
  const holders: Holder[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    const holds = fds.some((fd) => {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${entry}/fd/${fd}`));
        return m !== null && inodes.has(m[1]!);
      } catch {
        return false;
      }
    });
    if (holds) holders.push({ pid: Number(entry), command: read(`/proc/${entry}/cmdline`).split("\0").filter(Boolean).join(" ") });
  }
  return holders;
}
