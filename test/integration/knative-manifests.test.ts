// knative/ as a user installs it: the kustomization builds with kubectl's kustomize; every object
// passes Knative's own admission logic (SetDefaults then Validate of the eventing and serving API
// types, run by tools/knative's knative-check with the webhooks' ConfigMaps), with nothing left
// for the missing webhook to default; and every manifest passes server-side validation on the
// real API server with Knative's CRDs (from the knative.dev/eventing and serving modules).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { ensureBinaries, ensureKnative, type KnativeAssets } from "../../dev/control-plane/binaries.ts";
import { adminClient } from "./helpers.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** What these tests read of an object in knative/. */
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  spec?: {
    resources?: unknown[];
    template: { spec: { containers: { env?: { name: string }[]; envFrom?: unknown }[] } };
  };
}

let kubectl: string;
let knative: KnativeAssets;

function run(...args: string[]) {
  const r = spawnSync(kubectl, [`--kubeconfig=${inject("kubeconfig")}`, ...args], { cwd: root, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** knative-check over a YAML stream, with the ConfigMaps Knative's webhooks read. */
function knativeCheck(yaml: string) {
  const configs = ["eventing/core/configmaps", "serving/core/configmaps"].map(
    (d) => `--config=${join(knative.config, d)}`,
  );
  const r = spawnSync(join(knative.bin, "knative-check"), configs, { input: yaml, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  kubectl = ensureBinaries().kubectl;
  knative = ensureKnative();
});

describe("knative/", () => {
  it("builds with kustomize into the expected objects", () => {
    const r = run("kustomize", "knative/");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const kinds = parseAllDocuments(r.stdout)
      .map((d) => d.toJS() as Manifest)
      .map((o) => `${o.kind}/${o.metadata.name}`)
      .sort();
    expect(kinds).toEqual([
      "ApiServerSource/poolrelay-watch",
      "Broker/dynamo-pool-relay",
      "ClusterRole/poolrelay-apiserversource",
      "ClusterRole/poolrelay-apply",
      "ClusterRole/poolrelay-eligibility",
      "ClusterRole/poolrelay-source",
      "ClusterRole/poolrelay-status",
      "ClusterRoleBinding/poolrelay-apiserversource",
      "ClusterRoleBinding/poolrelay-apply",
      "ClusterRoleBinding/poolrelay-eligibility",
      "ClusterRoleBinding/poolrelay-source",
      "ClusterRoleBinding/poolrelay-status",
      expect.stringMatching(/^ConfigMap\/poolrelay-settings-[a-z0-9]{10}$/),
      "CustomResourceDefinition/dynamopoolrelays.nvidia.com",
      "Deployment/poolrelay-source",
      "Namespace/dynamo-system",
      "PingSource/poolrelay-resync",
      "PodDisruptionBudget/poolrelay-source",
      "Role/poolrelay-source-lease",
      "RoleBinding/poolrelay-source-lease",
      "Service/poolrelay-apply",
      "Service/poolrelay-dead-letter",
      "Service/poolrelay-eligibility",
      "Service/poolrelay-status",
      "ServiceAccount/poolrelay-apiserversource",
      "ServiceAccount/poolrelay-apply",
      "ServiceAccount/poolrelay-eligibility",
      "ServiceAccount/poolrelay-source",
      "ServiceAccount/poolrelay-status",
      "SinkBinding/poolrelay-dead-letter-sink",
      "SinkBinding/poolrelay-eligibility-sink",
      "SinkBinding/poolrelay-source-sink",
      "Trigger/poolrelay-apply",
      "Trigger/poolrelay-eligibility",
      "Trigger/poolrelay-status",
    ]);
  });

  it("gives every program the settings ConfigMap by its hashed name, and the ApiServerSource its DGD version", () => {
    const objects = parseAllDocuments(run("kustomize", "knative/").stdout).map((d) => d.toJS() as Manifest);
    const settings = objects.find((o) => o.kind === "ConfigMap")!;
    expect(settings.metadata.name).toMatch(/^poolrelay-settings-[a-z0-9]{10}$/);
    expect(settings.data).toMatchObject({
      DGD_API_VERSION: "nvidia.com/v1beta1",
      RELAY_COMMAND: '["python3","-m","dynamo.kv_dc_relay"]',
    });
    const programs = objects.filter(
      (o) => (o.kind === "Service" && o.apiVersion === "serving.knative.dev/v1") || o.kind === "Deployment",
    );
    expect(programs).toHaveLength(5);
    for (const p of programs)
      expect(p.spec!.template.spec.containers[0]!.envFrom).toEqual([
        { configMapRef: { name: settings.metadata.name } },
      ]);
    const watch = objects.find((o) => o.kind === "ApiServerSource")!;
    expect(watch.spec!.resources).toContainEqual({ apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment" });
  });

  it("passes Knative's own defaulting and validation, with every webhook default written out", () => {
    const r = knativeCheck(run("kustomize", "knative/").stdout);
    expect(r.stderr).toBe("");
    expect(r.stdout).not.toMatch(/^ERROR/m);
    // Every Knative object was checked: Broker, 3 Triggers, ApiServerSource, PingSource, 3 SinkBindings, 4 Services.
    expect(r.stdout).toMatch(/^13 Knative objects checked, 0 invalid$/m);
    expect(r.code).toBe(0);
  });

  it.each([
    {
      name: "a Trigger whose filter mixes dialects in one entry",
      yaml: "apiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata: {name: t, namespace: dynamo-system, labels: {eventing.knative.dev/broker: b}}\nspec: {broker: b, filter: {}, filters: [{exact: {type: a}, prefix: {type: b}}], subscriber: {uri: 'http://x.dynamo-system.svc.cluster.local'}}\n",
      error: /multiple dialects found/,
    },
    {
      name: "a PingSource with a bad schedule",
      yaml: "apiVersion: sources.knative.dev/v1\nkind: PingSource\nmetadata: {name: p, namespace: dynamo-system}\nspec: {schedule: '61 * * * *', sink: {uri: 'http://x.dynamo-system.svc.cluster.local'}}\n",
      error: /schedule/,
    },
    {
      name: "a Broker the webhook would have defaulted",
      yaml: "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata: {name: b, namespace: dynamo-system}\n",
      error:
        /the webhook would default \.metadata\.annotations to \{"eventing\.knative\.dev\/broker\.class":"MTChannelBasedBroker"\}/,
    },
    {
      name: "a field eventing does not know (its webhook decodes strictly)",
      yaml: "apiVersion: sources.knative.dev/v1\nkind: SinkBinding\nmetadata: {name: s, namespace: dynamo-system}\nspec: {subject: {apiVersion: apps/v1, kind: Deployment, name: d, namespace: dynamo-system}, sink: {uri: 'http://x.dynamo-system.svc.cluster.local'}, bogus: 1}\n",
      error: /unknown field "bogus"/,
    },
    {
      name: "a Knative Service with a negative timeout",
      yaml: "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: s, namespace: dynamo-system}\nspec: {template: {spec: {timeoutSeconds: -1, containers: [{image: x}]}}}\n",
      error: /timeoutSeconds/,
    },
  ])("rejects $name (the check can fail)", ({ yaml, error }) => {
    const r = knativeCheck(yaml);
    expect(r.stdout).toMatch(error);
    expect(r.stdout).toMatch(/^1 Knative objects checked, 1 invalid$/m);
    expect(r.code).toBe(1);
  });

  it("gets the resync's sink from the real SinkBinding reconciler: K_SINK, the Broker's address, in the eligibility Service", async () => {
    const admin = await adminClient();
    const written = parseAllDocuments(readFileSync(join(root, "knative/services.yaml"), "utf8"))
      .map((d) => d.toJS() as Manifest | null)
      .find((o) => o?.metadata?.name === "poolrelay-eligibility");
    expect(written!.spec!.template.spec.containers[0]!.env!.map((e: { name: string }) => e.name)).not.toContain(
      "K_SINK",
    );
    const broker = await admin.get<{ status: { address: { url: string } } }>({
      apiVersion: "eventing.knative.dev/v1",
      kind: "Broker",
      namespace: "dynamo-system",
      name: "dynamo-pool-relay",
    });
    expect(broker?.status.address.url).toBe(
      "http://broker-ingress.knative-eventing.svc.cluster.local/dynamo-system/dynamo-pool-relay",
    );
    const live = await admin.get<{
      spec: { template: { spec: { containers: { env: { name: string; value: string }[] }[] } } };
    }>({
      apiVersion: "serving.knative.dev/v1",
      kind: "Service",
      namespace: "dynamo-system",
      name: "poolrelay-eligibility",
    });
    expect(live?.spec.template.spec.containers[0]!.env).toContainEqual({
      name: "K_SINK",
      value: broker!.status.address.url,
    });
    // The event source's Deployment, the same way.
    const source = await admin.get<typeof live>({
      apiVersion: "apps/v1",
      kind: "Deployment",
      namespace: "dynamo-system",
      name: "poolrelay-source",
    });
    expect(source?.spec.template.spec.containers[0]!.env).toContainEqual({
      name: "K_SINK",
      value: broker!.status.address.url,
    });
  });

  it("relies on the BETA flag delivery-timeout: a cluster that turned it off rejects the Triggers", () => {
    const off = mkdtempSync(join(tmpdir(), "poolrelay-features-"));
    const features = readFileSync(join(knative.config, "eventing/core/configmaps/features.yaml"), "utf8").replace(
      /^(\s+)delivery-timeout: "?enabled"?$/m,
      '$1delivery-timeout: "disabled"',
    );
    expect(features).toMatch(/delivery-timeout: "disabled"/);
    writeFileSync(join(off, "features.yaml"), features);
    const configs = ["eventing/core/configmaps", "serving/core/configmaps"].map(
      (d) => `--config=${join(knative.config, d)}`,
    );
    const r = spawnSync(join(knative.bin, "knative-check"), [...configs, `--config=${off}`], {
      input: run("kustomize", "knative/").stdout,
      encoding: "utf8",
    });
    expect(r.stdout.match(/^ERROR .*Trigger.*timeout/gm)).toHaveLength(3);
    expect(r.status).toBe(1);
  });

  it("passes server-side validation of every object (kubectl apply -k --dry-run=server)", () => {
    const r = run("apply", "-k", "knative/", "--dry-run=server");
    // kubectl warns about objects the test installed with server-side apply, not with kubectl apply.
    expect(
      r.stderr
        .split("\n")
        .filter((l) => l && !/missing the kubectl\.kubernetes\.io\/last-applied-configuration annotation/.test(l)),
    ).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n")).toHaveLength(35);
  });

  it("is rejected by the same validation when a manifest is wrong (the check can fail)", () => {
    const bad =
      "apiVersion: sources.knative.dev/v1\nkind: PingSource\nmetadata: {name: bad, namespace: dynamo-system}\nspec: {schedule: 5}\n";
    const r = spawnSync(kubectl, [`--kubeconfig=${inject("kubeconfig")}`, "apply", "--dry-run=server", "-f", "-"], {
      input: bad,
      encoding: "utf8",
    });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/spec\.schedule/);
  });
});
