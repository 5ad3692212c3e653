// The product's image, built with buildah from the unmodified Dockerfile, run by a real kubelet,
// containerd and runc: what the README and the Dockerfile say of it. Each function is started as
// knative/services.yaml starts it (its env selects it), as the user the image names, and stops
// at once on the kubelet's SIGTERM as PID 1.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { inject, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { ensureBinaries } from "../../dev/control-plane/binaries.ts";
import type { KubeObject } from "../../shared/kube/client.ts";
import { adminClient, eventually, freshNamespace, TEST_MANAGER } from "../integration/helpers.ts";

const services = fileURLToPath(new URL("../../knative/services.yaml", import.meta.url));
const IMAGE = "dev.local/dynamo-pool-relay:local";

interface EnvVar {
  name: string;
  value?: string;
}

/** Each function's FUNCTION_TARGET and FUNCTION_SOURCE, as the shipped Knative Services set them. */
function shippedFunctions(): { service: string; env: EnvVar[] }[] {
  return parseAllDocuments(readFileSync(services, "utf8"))
    .map(
      (d) =>
        d.toJS() as {
          kind?: string;
          metadata: { name: string };
          spec: { template: { spec: { containers: { env?: EnvVar[] }[] } } };
        },
    )
    .filter((d) => d?.kind === "Service")
    .map((d) => ({
      service: d.metadata.name,
      env: (d.spec.template.spec.containers[0]!.env ?? []).filter(
        (e) => e.name === "FUNCTION_TARGET" || e.name === "FUNCTION_SOURCE",
      ),
    }));
}

function functionPod(namespace: string, name: string, env: EnvVar[]): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace },
    spec: {
      // Far longer than a stop takes: a pod that ignored SIGTERM would stay this long.
      terminationGracePeriodSeconds: 120,
      automountServiceAccountToken: false,
      containers: [
        {
          name: "function",
          image: IMAGE,
          imagePullPolicy: "Never",
          // Node's own account of each module it compiles from the code cache.
          env: [
            ...env,
            { name: "NODE_ENV", value: "production" },
            { name: "NODE_DEBUG_NATIVE", value: "COMPILE_CACHE" },
          ],
          ports: [{ containerPort: 8080 }],
          readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
          securityContext: { runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
        },
      ],
    },
  };
}

function kubectl(...args: string[]): string {
  const r = spawnSync(ensureBinaries().kubectl, ["--kubeconfig", inject("kubeconfig"), ...args], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`kubectl ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

describe("the product's image on a real node", () => {
  it("serves each shipped function, selected by its env, as uid 1000 from the code cache, with no node_modules", async () => {
    const client = await adminClient();
    const ns = await freshNamespace("image");
    const functions = shippedFunctions();
    expect(functions.map((f) => f.service).sort()).toEqual([
      "poolrelay-apply",
      "poolrelay-dead-letter",
      "poolrelay-eligibility",
      "poolrelay-status",
    ]);
    for (const f of functions) await client.apply(functionPod(ns, f.service, f.env), TEST_MANAGER);
    for (const f of functions) {
      const target = f.env.find((e) => e.name === "FUNCTION_TARGET")!.value!;
      const ip = await eventually(
        `${f.service} Ready`,
        async () => {
          const pod = await client.get<{
            status?: { podIP?: string; conditions?: { type: string; status: string }[] };
          }>({ apiVersion: "v1", kind: "Pod", namespace: ns, name: f.service });
          return pod?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")
            ? pod.status.podIP
            : undefined;
        },
        120_000,
      );
      // The function that answers is the one its env named: it says so in its refusal of a GET.
      const res = await fetch(`http://${ip}:8080/`);
      expect(res.status).toBe(400);
      expect(await res.text()).toContain(`${target} accepts CloudEvents by POST, got GET`);
      expect(kubectl("exec", "-n", ns, f.service, "--", "id", "-u").trim()).toBe("1000");
      expect(
        kubectl(
          "exec",
          "-n",
          ns,
          f.service,
          "--",
          "sh",
          "-c",
          "ls -d /app/functions/main.mjs; find / -xdev -name node_modules -not -path '/usr/local/lib/*' 2>/dev/null; true",
        ),
      ).toBe("/app/functions/main.mjs\n");
      const log = kubectl("logs", "-n", ns, f.service);
      expect(log).toContain("cache for file:///app/functions/framework.mjs was accepted");
      expect(log).toContain(`cache for file://${f.env.find((e) => e.name === "FUNCTION_SOURCE")!.value} was accepted`);
    }
  });

  it("goes at once when the kubelet stops it, well inside its grace period", async () => {
    const client = await adminClient();
    const ns = await freshNamespace("image-stop");
    const [f] = shippedFunctions();
    await client.apply(functionPod(ns, "stopped", f!.env), TEST_MANAGER);
    const key = { apiVersion: "v1", kind: "Pod", namespace: ns, name: "stopped" };
    const uid = await eventually(
      "the pod Ready",
      async () => {
        const pod = await client.get<{
          metadata: { uid: string };
          status?: { conditions?: { type: string; status: string }[] };
        }>(key);
        return pod?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")
          ? pod.metadata.uid
          : undefined;
      },
      120_000,
    );
    expect(await client.deleteExact(key, uid)).toBe("deleted");
    // Its grace period is 120 s: only a process that exits on SIGTERM is gone within 20.
    await eventually("the pod gone", async () => (await client.get(key)) === undefined, 20_000);
  });
});
