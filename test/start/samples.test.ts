// `npm start` installs samples/ and waits for the first DynamoPoolRelay to go Ready; with
// --no-samples it installs none. Each case is a real `npm start`, stopped with SIGINT after.
import { afterEach, describe, expect, it } from "vitest";
import { KubeClient, connect } from "../../shared/kube/client.ts";
import { alive, npmStart, until, type Started } from "./npm-start.ts";

type Dpr = { metadata: { namespace: string; name: string }; status?: { conditions?: { type: string; status: string; reason: string }[] } };
const condition = (d: Dpr, type: string) => d.status?.conditions?.find((c) => c.type === type);

let started: Started | undefined;
afterEach(async () => {
  if (!started) return;
  const { npm, state } = started;
  started = undefined;
  process.kill(npm.pid!, "SIGINT");
  await until("npm start has stopped", () => (alive(state.pid) ? undefined : true), 60_000);
});

async function reconciling(args: string[]): Promise<KubeClient> {
  started = await npmStart(args);
  const s = started;
  await until("npm start is reconciling", () => {
    if (s.npm.exitCode !== null) throw new Error(`npm start exited ${s.npm.exitCode}:\n${s.output()}`);
    return s.output().includes("reconciling; look around with:") ? true : undefined;
  }, 240_000);
  return new KubeClient(await connect(s.state.kubeconfig));
}

describe("npm start", () => {
  it("installs the samples: llama is Ready when it says so, qwen is published, mixtral is reported not eligible", async () => {
    const admin = await reconciling([]);
    expect(started!.output()).toMatch(/\nREADY inference\/llama/);
    // READY speaks for llama alone: qwen and mixtral are reconciled on their own events, maybe later.
    const list = () => admin.list<Dpr>("nvidia.com/v1alpha1", "DynamoPoolRelay", undefined);
    const settled = Date.now() + 60_000;
    let dprs = await list();
    const expected = (d: Dpr) => (d.metadata.name === "mixtral" ? condition(d, "Eligible")?.status === "False" : condition(d, "ServicePublished")?.status === "True");
    while (Date.now() < settled && !dprs.every(expected)) {
      await new Promise((r) => setTimeout(r, 500));
      dprs = await list();
    }
    expect(dprs.map((d) => `${d.metadata.namespace}/${d.metadata.name}`).sort()).toEqual(["inference/llama", "inference/mixtral", "inference/qwen"]);
    const byName = Object.fromEntries(dprs.map((d) => [d.metadata.name, d]));
    expect(condition(byName["llama"]!, "Ready")).toMatchObject({ status: "True" });
    expect(condition(byName["qwen"]!, "ServicePublished")).toMatchObject({ status: "True" });
    expect(condition(byName["mixtral"]!, "Eligible")).toMatchObject({ status: "False", reason: "DiscoveryBackendNotKubernetes" });
  }, 360_000);

  it("installs no samples with --no-samples (the CRD is there, no DynamoPoolRelay is)", async () => {
    const admin = await reconciling(["--no-samples"]);
    expect(started!.output()).not.toContain("installing samples/");
    expect(await admin.get({ apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", name: "dynamopoolrelays.nvidia.com" })).toMatchObject({ spec: { group: "nvidia.com" } });
    expect(await admin.list("nvidia.com/v1alpha1", "DynamoPoolRelay", undefined)).toEqual([]);
  }, 360_000);
});
