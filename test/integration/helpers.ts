// Shared steps of the integration tests: a client for the one control plane, a fresh namespace per
// test, and polling until the world converges.
import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import { FAKE_NODE_PLACEMENT } from "../../dev/control-plane/index.ts";
import { KubeClient, connect, type KubeObject } from "../../shared/kube/client.ts";
import { ApiError } from "../../shared/kube/errors.ts";

let admin: Promise<KubeClient> | undefined;

export function adminClient(): Promise<KubeClient> {
  admin ??= connect(inject("kubeconfig")).then((c) => new KubeClient(c));
  return admin;
}

export const TEST_MANAGER = "dynamo-pool-relay/test";

export async function freshNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString("hex")}`;
  const client = await adminClient();
  await client.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name } }, TEST_MANAGER);
  return name;
}

/**
 * Polls until the probe returns a value. Only what passes with time is waited out (an API error the
 * adapter calls transient: 5xx, 429, 409, a connection failure); any other error, such as a 403
 * or a bug in the probe, fails the test at once with its own message instead of a time-out.
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      if (!(err instanceof ApiError && err.transient)) throw err;
      last = err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting until ${what}${last ? ` (last error: ${(last as Error).message})` : ""}`,
  );
}

/**
 * A DynamoPoolRelay whose Relay pods go on kwok's node: pods with no process, by the hundred
 * (test/node/relay.test.ts runs the real Relay). A test's own tolerations come first.
 */
export function dprObject(namespace: string, name: string, spec: Record<string, unknown> = {}): KubeObject {
  const tolerations = [...((spec["tolerations"] as object[] | undefined) ?? []), ...FAKE_NODE_PLACEMENT.tolerations];
  return {
    apiVersion: "nvidia.com/v1alpha1",
    kind: "DynamoPoolRelay",
    metadata: { name, namespace },
    spec: {
      image: "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.2.0",
      clusterID: "test-cluster",
      nodeSelector: FAKE_NODE_PLACEMENT.nodeSelector,
      ...spec,
      tolerations,
    },
  };
}

export function dgdObject(
  namespace: string,
  name: string,
  annotations: Record<string, string> = {},
  labels?: Record<string, string>,
): KubeObject {
  return {
    apiVersion: "nvidia.com/v1beta1",
    kind: "DynamoGraphDeployment",
    metadata: { name, namespace, annotations, ...(labels ? { labels } : {}) },
    spec: {
      backendFramework: "vllm",
      components: [
        { name: "Frontend", type: "frontend" },
        { name: "decode", type: "decode", replicas: 1 },
      ],
    },
  };
}
