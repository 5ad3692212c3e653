// knative/ as a user installs it: the kustomization builds with kubectl's kustomize, and every
// manifest passes server-side validation (--dry-run=server) on the real API server with the
// Knative CRDs installed (read at test time from KNATIVE_CRDS_DIR).
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { parseAllDocuments } from "yaml";
import { ensureBinaries } from "../../dev/control-plane/binaries.ts";
import { TEST_MANAGER, adminClient } from "./helpers.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
let kubectl: string;

function run(...args: string[]) {
  const r = spawnSync(kubectl, [`--kubeconfig=${inject("kubeconfig")}`, ...args], { cwd: root, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(async () => {
  kubectl = ensureBinaries().kubectl;
  expect(process.env["KNATIVE_CRDS_DIR"], "KNATIVE_CRDS_DIR must name the Knative CRDs for this test").toBeTruthy();
  const admin = await adminClient();
  await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: "dynamo-system" } }, TEST_MANAGER);
});

describe("knative/", () => {
  it("builds with kustomize into the expected objects", () => {
    const r = run("kustomize", "knative/");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const kinds = parseAllDocuments(r.stdout).map((d) => d.toJS()).map((o) => `${o.kind}/${o.metadata.name}`).sort();
    expect(kinds).toEqual([
      "ApiServerSource/poolrelay-watch", "Broker/dynamo-pool-relay", "ClusterRole/poolrelay-apiserversource", "ClusterRole/poolrelay-apply",
      "ClusterRole/poolrelay-eligibility", "ClusterRole/poolrelay-status", "ClusterRoleBinding/poolrelay-apiserversource",
      "ClusterRoleBinding/poolrelay-apply", "ClusterRoleBinding/poolrelay-eligibility", "ClusterRoleBinding/poolrelay-status",
      "CustomResourceDefinition/dynamopoolrelays.nvidia.com", "Namespace/dynamo-system", "PingSource/poolrelay-resync",
      "Service/poolrelay-apply", "Service/poolrelay-dead-letter", "Service/poolrelay-eligibility", "Service/poolrelay-status",
      "ServiceAccount/poolrelay-apiserversource", "ServiceAccount/poolrelay-apply", "ServiceAccount/poolrelay-eligibility", "ServiceAccount/poolrelay-status",
      "Trigger/poolrelay-apply", "Trigger/poolrelay-eligibility", "Trigger/poolrelay-status",
    ]);
  });

  it("passes server-side validation of every object (kubectl apply -k --dry-run=server)", () => {
    const r = run("apply", "-k", "knative/", "--dry-run=server");
    // kubectl warns about the namespace and CRD the test control plane created without kubectl apply.
    expect(r.stderr.split("\n").filter((l) => l && !/missing the kubectl\.kubernetes\.io\/last-applied-configuration annotation/.test(l))).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n")).toHaveLength(24);
  });

  it("is rejected by the same validation when a manifest is wrong (the check can fail)", () => {
    const bad = "apiVersion: sources.knative.dev/v1\nkind: PingSource\nmetadata: {name: bad, namespace: dynamo-system}\nspec: {schedule: 5}\n";
    const r = spawnSync(kubectl, [`--kubeconfig=${inject("kubeconfig")}`, "apply", "--dry-run=server", "-f", "-"], { input: bad, encoding: "utf8" });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/spec\.schedule/);
  });
});
