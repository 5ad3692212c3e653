// The fault suite's cluster: the same as the integration suite's (profile node), except that the
// product's traffic passes two proxies on this host, started before the product is applied and
// listening where pods reach this host: its functions reach the API server through the API fault
// proxy (fault-proxy.ts), and its deliveries pass the delivery-fault proxy (delivery-proxy.ts); see
// through-proxies.ts. Both live in this process; test files steer them and read what they saw over
// a small loopback control endpoint.
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { startProductCluster, type ProductCluster } from "../product-cluster.ts";
import type { DeliveryFaultConfig } from "./delivery-faults.ts";
import { DeliveryProxy } from "./delivery-proxy.ts";
import { destinationFromHost } from "./destinations.ts";
import { FaultProxy } from "./fault-proxy.ts";
import { throughProxies } from "./through-proxies.ts";

declare module "vitest" {
  export interface ProvidedContext {
    kubeconfig: string;
    brokerIngress: string;
    logs: string;
    functionsLog: string;
    hostAddress: string;
    faultControl: string;
  }
}

/** Fixed, so a run's fault sequence can be reproduced; FAULT_SEED overrides it. */
const SEED = Number(process.env["FAULT_SEED"] ?? 20261201);

let controlPlane: ProductCluster | undefined;
let proxy: FaultProxy | undefined;
let deliveries: DeliveryProxy | undefined;
let control: http.Server | undefined;

/** What the test files send to the control endpoint. */
interface FaultSettings {
  rates?: FaultProxy["rates"];
  outage?: FaultProxy["outage"];
}

export async function setup(project: TestProject) {
  try {
    controlPlane = await startProductCluster(async (objects, cp) => {
      // Where pods reach this host: the host's end of the node's link, where the API server
      // listens too, so its self-signed certificate names this address.
      const host = new URL(cp.server).hostname;
      const cert = readFileSync(join(cp.dir, "certs", "apiserver.crt"));
      proxy = new FaultProxy({
        upstream: cp.server,
        ca: cert,
        cert,
        key: readFileSync(join(cp.dir, "certs", "apiserver.key")),
        seed: SEED,
      });
      const apiServer = new URL(await proxy.listen(host));
      const d = (deliveries = new DeliveryProxy((ref) => destinationFromHost(cp.client, ref)));
      await d.listen(host);
      console.log(
        `[faults] the functions reach the API server through ${apiServer.origin}, deliveries pass the delivery-fault proxy (seed ${SEED})`,
      );
      return throughProxies(objects, { apiServer, delivery: (ref) => d.uri(ref) });
    });
  } catch (err) {
    await closeProxies();
    throw err;
  }
  control = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      if (req.method === "POST" && req.url === "/faults") {
        const settings = JSON.parse(body || "{}") as FaultSettings;
        proxy!.rates = settings.rates ?? {};
        proxy!.outage = settings.outage;
        return res.writeHead(204).end();
      }
      if (req.method === "POST" && req.url === "/delivery-faults") {
        deliveries!.faults.set(body ? (JSON.parse(body) as DeliveryFaultConfig) : undefined);
        return res.writeHead(204).end();
      }
      if (req.method === "GET" && req.url === "/stats") {
        const stats = {
          seed: SEED,
          counts: proxy!.counts,
          forwarded: proxy!.forwarded,
          deliveryFaults: deliveries!.faults.counts,
        };
        return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(stats));
      }
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((r) => control!.listen(0, "127.0.0.1", r));
  project.provide("kubeconfig", controlPlane.kubeconfig);
  project.provide("brokerIngress", controlPlane.brokerIngress);
  project.provide("logs", controlPlane.logs);
  project.provide("functionsLog", controlPlane.functionsLog);
  project.provide("hostAddress", new URL(controlPlane.server).hostname);
  project.provide("faultControl", `http://127.0.0.1:${(control.address() as AddressInfo).port}`);
}

async function closeProxies(): Promise<void> {
  await proxy?.close();
  await deliveries?.close();
}

export async function teardown() {
  await new Promise((r) => (control ? control.close(r) : r(undefined)));
  await closeProxies();
  await controlPlane?.stop();
}
