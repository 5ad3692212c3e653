/**
 * The local router's tap: GET /events streams every event entering the broker as one
 * structured-mode CloudEvent per line (what `poolrelay record` writes to a file).
 */
import { createServer, type ServerResponse } from "node:http";
import { toStructured, type CloudEvent } from "../shared/cloudevent.ts";

export interface Tap {
  url: string;
  publish(event: CloudEvent): void;
  close(): Promise<void>;
}

export async function startTap(): Promise<Tap> {
  const clients = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    if (req.method !== "GET" || req.url !== "/events") {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/x-ndjson", "cache-control": "no-store" });
    res.flushHeaders();
    clients.add(res);
    req.on("close", () => clients.delete(res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}/events`,
    publish: (event) => {
      const line = `${JSON.stringify(toStructured(event))}\n`;
      for (const c of clients) c.write(line);
    },
    close: async () => {
      for (const c of clients) c.end();
      await new Promise((resolve) => (server.close(resolve), server.closeAllConnections()));
    },
  };
}
