// The DynamoPoolRelay CRD on a real kube-apiserver: it installs, prints the promised columns and
// rejects invalid objects at admission with the messages the README documents.
import { spawnSync } from "node:child_process";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { ensureBinaries } from "../../dev/control-plane/binaries.ts";
import { ApiError } from "../../shared/kube/errors.ts";
import type { KubeClient } from "../../shared/kube/client.ts";
import { TEST_MANAGER, adminClient, dprObject, freshNamespace } from "./helpers.ts";

let client: KubeClient;
let ns: string;
beforeAll(async () => {
  client = await adminClient();
  ns = await freshNamespace("crd");
});

async function rejection(obj: ReturnType<typeof dprObject>): Promise<ApiError> {
  try {
    await client.apply(obj, TEST_MANAGER);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error(`${obj.metadata.name} was accepted`);
}

describe("the DynamoPoolRelay CRD", () => {
  it("is served with the short name dpr and the category dynamo", async () => {
    const list = (await client.request("GET", "/apis/nvidia.com/v1alpha1")) as { resources: { name: string; shortNames?: string[]; categories?: string[] }[] };
    expect(list.resources.find((r) => r.name === "dynamopoolrelays")).toMatchObject({ shortNames: ["dpr"], categories: ["dynamo"] });
  });

  it("defaults replicas to 2 and shows Ready, Replicas, Endpoint and Age as kubectl get dpr does", async () => {
    await client.apply(dprObject(ns, "columns"), TEST_MANAGER);
    const got = await client.get<{ spec: { replicas: number } }>({ apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", namespace: ns, name: "columns" });
    expect(got?.spec.replicas).toBe(2);
    const table = (await client.request(
      "GET",
      `/apis/nvidia.com/v1alpha1/namespaces/${ns}/dynamopoolrelays`,
      undefined,
      undefined,
      "application/json;as=Table;v=v1;g=meta.k8s.io",
    )) as { columnDefinitions: { name: string; priority: number }[]; rows: { cells: unknown[] }[] };
    expect(table.columnDefinitions.filter((c) => c.priority === 0).map((c) => c.name)).toEqual(["Name", "Ready", "Replicas", "Endpoint", "Age"]);
    expect(table.rows[0]?.cells[0]).toBe("columns");
    // And as people see it.
    const kubectl = spawnSync(ensureBinaries().kubectl, [`--kubeconfig=${inject("kubeconfig")}`, "get", "dpr", "-n", ns], { encoding: "utf8" });
    expect(kubectl.stderr).toBe("");
    expect(kubectl.stdout.split("\n")[0]).toMatch(/^NAME\s+READY\s+REPLICAS\s+ENDPOINT\s+AGE$/);
    expect(kubectl.stdout).toMatch(/\ncolumns\s/);
  });

  it.each([
    { name: "no-image", obj: () => ({ ...dprObject(ns, "no-image"), spec: { clusterID: "c" } }), message: /spec\.image: Required value/ },
    { name: "negative", obj: () => dprObject(ns, "negative", { replicas: -1 }), message: /spec\.replicas: Invalid value: -1: spec\.replicas in body should be greater than or equal to 0/ },
    {
      name: "reserved-env",
      obj: () => dprObject(ns, "reserved-env", { env: [{ name: "DYN_DC_ID", value: "x" }, { name: "OK", value: "1" }, { name: "POD_UID", value: "y" }] }),
      message: /spec\.env\[0\]: Invalid value: the product sets DYN_DC_ID itself; remove it from spec\.env, spec\.env\[2\]: Invalid value: the product sets POD_UID itself/,
    },
    { name: "with.dot", obj: () => dprObject(ns, "with.dot"), message: /metadata\.name must be a DNS-1035 label of at most 52 characters/ },
    { name: "a".repeat(53), obj: () => dprObject(ns, "a".repeat(53)), message: /metadata\.name must be a DNS-1035 label/ },
    { name: "1starts-with-digit", obj: () => dprObject(ns, "1starts-with-digit"), message: /metadata\.name must be a DNS-1035 label/ },
  ])("rejects $name at admission", async ({ obj, message }) => {
    const err = await rejection(obj());
    expect(err.status).toBe(422);
    expect(err.message).toMatch(message);
  });

  it("accepts a 52-character name, the longest that forms a Service name", async () => {
    await expect(client.apply(dprObject(ns, "a".repeat(52)), TEST_MANAGER)).resolves.toBeTruthy();
  });
});
