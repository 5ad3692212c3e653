/**
 * A tap on the Broker: a Trigger without a filter delivers every event that enters the Broker
 * (source events and the functions' replies) to a local server, which answers 202 and streams each
 * one as a structured-mode CloudEvent line to GET /events (what `poolrelay record` writes to a file).
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import { fromHttp, toStructured, type CloudEvent } from "../shared/cloudevent.ts";
import type { KubeObject } from "../shared/kube/client.ts";

export interface Tap {
  /** Where the Trigger delivers (POST). */
  sink: string;
  /** Where `poolrelay record` reads (GET, JSON Lines). */
  url: string;
  close(): Promise<void>;
}

/** A delivery as it arrived: what a subscriber of the Broker receives. */
export interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
}

/** `host`: the address it listens on, one the Broker's filter can reach (on the real node, not loopback: the host's end of the node's link). */
export async function startTap(
  onEvent: (event: CloudEvent, delivery: Delivery) => void = () => {},
  host = "127.0.0.1",
): Promise<Tap> {
  const clients = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/events") {
      res.writeHead(200, { "content-type": "application/x-ndjson", "cache-control": "no-store" });
      res.flushHeaders();
      clients.add(res);
      req.on("close", () => clients.delete(res));
      return;
    }
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const parsed = fromHttp(req.headers, body);
      if (!parsed.ok) {
        res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: parsed.error }));
        return;
      }
      onEvent(parsed.value, { headers: req.headers, body: body.toString("utf8") });
      const line = `${JSON.stringify(toStructured(parsed.value))}\n`;
      for (const c of clients) c.write(line);
      res.writeHead(202).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as { port: number };
  return {
    sink: `http://${host}:${port}/`,
    url: `http://${host}:${port}/events`,
    close: async () => {
      for (const c of clients) c.end();
      await new Promise((resolve) => (server.close(resolve), server.closeAllConnections()));
    },
  };
}

/** The Trigger that feeds a tap: no filter, no retries (a tap that is gone misses events, it does not stall the Broker). */
export function tapTrigger(name: string, namespace: string, broker: string, sink: string): KubeObject {
  return {
    apiVersion: "eventing.knative.dev/v1",
    kind: "Trigger",
    metadata: { name, namespace, labels: { "eventing.knative.dev/broker": broker } },
    spec: { broker, filter: {}, subscriber: { uri: sink }, delivery: { retry: 0, timeout: "PT5S" } },
  };
}
