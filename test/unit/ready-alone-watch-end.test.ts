// readyAlone (bench/pipeline-support.ts) when the API server ends one of its watches before the
// count or the time is reached, as a real one does after its watch timeout: the bench must fail,
// not print the short count as the cluster's own. A real API server ends a watch only after 30 to
// 60 minutes, so a loopback one ends it here (the integration test runs the other cases on a real one).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it } from "vitest";
import { readyAlone } from "../../bench/pipeline-support.ts";
import { KubeClient } from "../../shared/kube/client.ts";

let server: http.Server | undefined;
afterEach(async () => {
  if (!server) return;
  server.closeAllConnections();
  await new Promise((r) => server!.close(r));
});

/** Lists answer empty; each watch stays open, its response kept by the resource it watches. */
async function apiServer(): Promise<{ url: string; watches: Map<string, http.ServerResponse> }> {
  const watches = new Map<string, http.ServerResponse>();
  server = http.createServer((req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    if (!req.url!.includes("watch=true"))
      return void res.end('{"kind":"List","metadata":{"resourceVersion":"7"},"items":[]}');
    res.flushHeaders();
    watches.set(req.url!.split("?")[0]!, res);
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, watches };
}

it("fails, naming the watch and the count so far, when the API server ends a watch early", async () => {
  const api = await apiServer();
  const alone = readyAlone(
    new KubeClient({ server: api.url, httpsOptions: async () => ({}) }),
    "app=relay",
    3,
    600_000,
  );
  await alone.watching;
  expect([...api.watches.keys()].sort()).toEqual([
    "/apis/apps/v1/deployments",
    "/apis/discovery.k8s.io/v1/endpointslices",
  ]);
  api.watches.get("/apis/apps/v1/deployments")!.end();
  await expect(alone.ready).rejects.toThrow(
    "the Deployment watch ended before 3 were Ready or 600000 ms passed (0 were)",
  );
});
