// The poolrelay CLI as a user runs it: a real process, real files, exit codes and output.
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";

const root = fileURLToPath(new URL("../../", import.meta.url));
const NOW = "2026-01-01T00:00:00Z";

function poolrelay(args: string[], input?: string) {
  const r = spawnSync(process.execPath, ["bin/poolrelay.js", ...args], { cwd: root, input, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const samples = readdirSync(`${root}/samples`).filter((f) => f.endsWith(".yaml")).sort();

describe("poolrelay render", () => {
  it.each(samples)("renders samples/%s exactly as its golden file (UPDATE_GOLDEN=1 rewrites it)", (sample) => {
    const { code, stdout, stderr } = poolrelay(["render", "-f", `samples/${sample}`, "--now", NOW]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const golden = `${root}/test/golden/${sample}`;
    if (process.env["UPDATE_GOLDEN"]) writeFileSync(golden, stdout);
    expect(stdout).toBe(readFileSync(golden, "utf8"));
  });

  it("prints the six objects for the eligible sample, and they parse as YAML", () => {
    const docs = parseAllDocuments(poolrelay(["render", "-f", "samples/eligible.yaml", "--now", NOW]).stdout).map((d) => d.toJS());
    expect(docs.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([
      "ServiceAccount/llama-pool-relay", "Role/llama-pool-relay", "RoleBinding/llama-pool-relay",
      "ConfigMap/llama-pool-relay", "Deployment/llama-pool-relay", "Service/llama-pool-relay",
    ]);
  });

  it("lists both worker generations of the mid-rollout sample in the sources document", () => {
    const [result] = JSON.parse(poolrelay(["render", "-f", "samples/rollout.yaml", "-o", "json", "--now", NOW]).stdout);
    const cm = result.apply.find((o: { kind: string }) => o.kind === "ConfigMap");
    expect(JSON.parse(cm.data["sources.json"]).sources).toEqual([{ namespace: "inference-qwen-a1b2c3d4" }, { namespace: "inference-qwen-e5f6a7b8" }]);
    expect(result.status.workerNamespaces).toEqual(["inference-qwen-a1b2c3d4", "inference-qwen-e5f6a7b8"]);
  });

  it("prints the withdrawal and status for the ineligible sample", () => {
    const [result] = JSON.parse(poolrelay(["render", "-f", "samples/ineligible.yaml", "-o", "json", "--now", NOW]).stdout);
    expect(result).toMatchObject({
      dynamoPoolRelay: "inference/mixtral",
      action: "withdraw",
      reason: "DiscoveryBackendNotKubernetes",
      apply: [],
      withdraw: [{ kind: "Service", namespace: "inference", name: "mixtral-pool-relay" }],
    });
    expect(result.status.conditions.find((c: { type: string }) => c.type === "Eligible").status).toBe("False");
  });

  it("reads stdin and applies --default-discovery-backend", () => {
    const input = readFileSync(`${root}/samples/eligible.yaml`, "utf8");
    const [result] = JSON.parse(poolrelay(["render", "-f", "-", "-o", "json", "--default-discovery-backend", "etcd", "--now", NOW], input).stdout);
    expect(result).toMatchObject({ action: "withdraw", reason: "DiscoveryBackendNotKubernetes" });
  });

  it("fills a missing namespace from -n", () => {
    const input = "apiVersion: nvidia.com/v1alpha1\nkind: DynamoPoolRelay\nmetadata: {name: g}\nspec: {image: r, clusterID: c}\n";
    const [result] = JSON.parse(poolrelay(["render", "-f", "-", "-o", "json", "-n", "prod", "--now", NOW], input).stdout);
    expect(result).toMatchObject({ dynamoPoolRelay: "prod/g", reason: "DGDNotFound" });
  });

  it.each([
    { name: "an invalid DynamoPoolRelay", input: "apiVersion: nvidia.com/v1alpha1\nkind: DynamoPoolRelay\nmetadata: {name: g, namespace: n}\nspec: {clusterID: c, env: [{name: POD_NAME, value: x}]}\n", expected: /<stdin>#1: DynamoPoolRelay n\/g is invalid: spec\.image: .*; spec\.env: the product sets POD_NAME itself; remove it from spec\.env/ },
    { name: "broken YAML", input: "kind: [\n", expected: /<stdin>(:\d+)?: invalid YAML/ },
    { name: "a scalar document", input: "hello\n", expected: /<stdin>#1: expected a Kubernetes object, got string/ },
  ])("exits 1 on $name with a message naming the object and field", ({ input, expected }) => {
    const r = poolrelay(["render", "-f", "-"], input);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(expected);
  });

  it.each([
    { name: "no -f", args: ["render"], expected: /render needs at least one -f/ },
    { name: "a bad -o", args: ["render", "-f", "samples", "-o", "xml"], expected: /-o must be yaml or json, got "xml"/ },
    { name: "an unknown backend", args: ["render", "-f", "samples", "--default-discovery-backend", "zk"], expected: /must be one of kubernetes, etcd, got "zk"/ },
    { name: "an unknown command", args: ["frobnicate"], expected: /unknown command "frobnicate"/ },
  ])("exits 2 on $name", ({ args, expected }) => {
    const r = poolrelay(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(expected);
  });

  it("exits 1 for a path that does not exist", () => {
    const r = poolrelay(["render", "-f", "nope.yaml"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/nope\.yaml: no such file or folder/);
  });

  it("renders the whole samples folder in name order", () => {
    const results = JSON.parse(poolrelay(["render", "-f", "samples", "-o", "json", "--now", NOW]).stdout);
    expect(results.map((r: { dynamoPoolRelay: string; action: string }) => `${r.dynamoPoolRelay}:${r.action}`)).toEqual([
      "inference/llama:apply", "inference/mixtral:withdraw", "inference/qwen:apply",
    ]);
    expect(parse(JSON.stringify(results))).toEqual(results);
  });
});
