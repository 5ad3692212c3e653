// The fault suite's cluster: the same as the integration suite's, except that the product's
// functions reach the API server through a fault proxy (fault-proxy.ts). The proxy lives in this
// process; test files steer it and read what it saw over a small loopback control endpoint.
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";
import type { ControlPlane } from "../../dev/control-plane/index.ts";
import { startProductCluster } from "../product-cluster.ts";
import { FaultProxy } from "./fault-proxy.ts";

declare module "vitest" {
  export interface ProvidedContext {
    kubeconfig: string;
    controlPlaneDir: string;
    faultControl: string;
  }
}

/** Fixed, so a run's fault sequence can be reproduced; FAULT_SEED overrides it. */
const SEED = Number(process.env["FAULT_SEED"] ?? 20261201);

let controlPlane: ControlPlane | undefined;
let proxy: FaultProxy | undefined;
let control: http.Server | undefined;

export async function setup(project: TestProject) {
  controlPlane = await startProductCluster({
    productApiServer: async (api) => {
      // A start retried after a port race asks again: the proxy of the failed attempt goes.
      await proxy?.close();
      proxy = new FaultProxy({ upstream: api.server, ca: readFileSync(api.caFile), cert: readFileSync(api.certFile), key: readFileSync(api.keyFile), seed: SEED });
      const url = await proxy.listen();
      console.log(`[faults] the functions reach the API server through ${url} (seed ${SEED})`);
      return url;
    },
  });
  control = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method === "POST" && req.url === "/faults") {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Pick<FaultProxy, "rates" | "outage">;
        proxy!.rates = body.rates ?? {};
        proxy!.outage = body.outage;
        return res.writeHead(204).end();
      }
      if (req.method === "GET" && req.url === "/stats") {
        return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ seed: SEED, counts: proxy!.counts, forwarded: proxy!.forwarded }));
      }
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((r) => control!.listen(0, "127.0.0.1", r));
  project.provide("kubeconfig", controlPlane.kubeconfig);
  project.provide("controlPlaneDir", controlPlane.dir);
  project.provide("faultControl", `http://127.0.0.1:${(control.address() as AddressInfo).port}`);
}

export async function teardown() {
  await new Promise((r) => (control ? control.close(r) : r(undefined)));
  await proxy?.close();
  await controlPlane?.stop();
}
