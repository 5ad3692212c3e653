/**
 * The product's functions on local ports behind a local broker that routes like the Triggers in
 * knative/: the whole event pipeline in one process, for tests and for `npm start`. Each function
 * can act as its own ServiceAccount (impersonation), so the product RBAC is enforced as on a cluster.
 */
import type { Server } from "node:http";
import { http } from "@google-cloud/functions-framework";
import { getTestServer } from "@google-cloud/functions-framework/testing";
import { fileURLToPath } from "node:url";
import { readObjects } from "./yaml.ts";
import type { CloudEvent } from "../shared/cloudevent.ts";
import { parseConfig, type Config } from "../shared/config.ts";
import { KubeClient, connect } from "../shared/kube/client.ts";
import { apply } from "../functions/apply/handler.ts";
import { eligibility } from "../functions/eligibility/handler.ts";
import type { Handler } from "../functions/runtime/handler.ts";
import { serve, type Environment } from "../functions/runtime/serve.ts";
import { status } from "../functions/status/handler.ts";
import { LocalBroker, type DeliveryRecord } from "./router/broker.ts";
import { routesFromTriggers } from "./router/triggers.ts";

export const FUNCTIONS: Record<string, Handler> = { eligibility, apply, status };
export const PRODUCT_NAMESPACE = "dynamo-system";
const RBAC_FILE = fileURLToPath(new URL("../knative/rbac.yaml", import.meta.url));

export interface PipelineOptions {
  kubeconfig: string;
  /** Run each function as its ServiceAccount `system:serviceaccount:dynamo-system:poolrelay-<name>`. */
  impersonate: boolean;
  env?: Record<string, string>;
  onEvent?: (event: CloudEvent) => void;
  onDelivery?: (record: DeliveryRecord) => void;
  log?: (line: string) => void;
}

export interface Pipeline {
  broker: LocalBroker;
  sink: string;
  urls: Record<string, string>;
  config: Config;
  stop(): Promise<void>;
}

let registrations = 0;

/** The product's ServiceAccounts, ClusterRoles and bindings, as knative/rbac.yaml defines them. */
export async function installProductRbac(admin: KubeClient, fieldManager: string): Promise<void> {
  await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: PRODUCT_NAMESPACE } }, fieldManager);
  for (const obj of readObjects(RBAC_FILE)) await admin.apply(obj, fieldManager, { force: true });
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/`;
}

export async function startPipeline(options: PipelineOptions): Promise<Pipeline> {
  const admin = new KubeClient(await connect(options.kubeconfig));
  const servers: Server[] = [];
  const urls: Record<string, string> = {};
  // The resync emits into the broker's ingress, so it listens before the functions start.
  const broker = new LocalBroker([], {
    ...(options.onDelivery ? { onDelivery: options.onDelivery } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
  });
  const sink = await broker.listen();
  const config = parseConfig({ ...options.env, K_SINK: sink });

  for (const [name, handler] of Object.entries(FUNCTIONS)) {
    const kube = options.impersonate ? admin.as(`system:serviceaccount:${PRODUCT_NAMESPACE}:poolrelay-${name}`) : admin;
    const env: Environment = {
      kube: async () => kube,
      config,
      now: () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
      fetch: globalThis.fetch,
      log: options.log ?? (() => {}),
    };
    const target = `${name}-local-${++registrations}`;
    http(target, serve(name, handler, env));
    const server = getTestServer(target);
    servers.push(server);
    urls[`poolrelay-${name}`] = await listen(server);
  }
  broker.setRoutes(routesFromTriggers(urls));
  return {
    broker,
    sink,
    urls,
    config,
    stop: async () => {
      await broker.close();
      // closeAllConnections: keep-alive sockets would otherwise hold close() open for seconds.
      await Promise.all(servers.map((s) => new Promise((r) => (s.close(r), s.closeAllConnections()))));
    },
  };
}
