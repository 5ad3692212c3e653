import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { listeningInodes, portFree, portHolders } from "./port-holder.ts";

const TABLE = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1111 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 2222 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:20FB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3333 1 0000000000000000 100 0 0 10 0`;

describe("port holders", () => {
  it("reads the listening sockets of a port from the kernel's table (not its connections)", () => {
    expect(listeningInodes(8080, [TABLE])).toEqual(new Set(["1111"]));
    expect(listeningInodes(8443, [TABLE])).toEqual(new Set(["3333"]));
    expect(listeningInodes(9090, [TABLE])).toEqual(new Set());
  });

  it("finds this process holding a port it listens on, and says the port is taken", async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as { port: number };
    try {
      expect(await portFree(port)).toBe(false);
      expect(portHolders(port).map((h) => h.pid)).toContain(process.pid);
    } finally {
      await new Promise((r) => server.close(r));
    }
    expect(await portFree(port)).toBe(true);
    expect(portHolders(port)).toEqual([]);
  });
});
