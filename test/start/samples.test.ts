// `npm start` installs samples/ and waits for the first DynamoPoolRelay to publish its Service; with
// --no-samples it installs none. Each case is a real `npm start` on the real node: what it prints
// (the Broker ingress, the tap, the logs folder) works from this host. Each ends by stopping the
// whole product, Ready, as signals.test.ts stops it while starting: with a terminal's Ctrl-C (the
// whole process group, so the start process gets it from the terminal and again from npm) and
// with SIGTERM to npm; nothing of it is left on the host.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { request } from "node:http";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { KubeClient, connect } from "../../shared/kube/client.ts";
import { alive, npmStart, signalAndCheck, until, type Signalled, type Up } from "./npm-start.ts";

type Dpr = {
  metadata: { namespace: string; name: string };
  status?: { conditions?: { type: string; status: string; reason: string }[] };
};
const condition = (d: Dpr, type: string) => d.status?.conditions?.find((c) => c.type === type);

let started: Up | undefined;
/** Stops the product this case started, and checks nothing of it is left. */
const stop = async (signalled: Signalled) => {
  const run = started!;
  started = undefined;
  await signalAndCheck(run, signalled);
};
// After a failure: stop what the case started.
afterEach(async () => {
  if (!started) return;
  const { npm, state } = started;
  started = undefined;
  process.kill(npm.pid!, "SIGINT");
  await until("npm start has stopped", () => (alive(state.pid) ? undefined : true), 90_000);
});

async function reconciling(args: string[]): Promise<KubeClient> {
  started = await npmStart(args);
  const s = started;
  await until(
    "npm start is reconciling",
    () => {
      if (s.npm.exitCode !== null) throw new Error(`npm start exited ${s.npm.exitCode}:\n${s.output()}`);
      return /\nreconciling, [\d.]+ s after start; look around with:\n/.test(s.output()) ? true : undefined;
    },
    300_000,
  );
  return new KubeClient(await connect(s.state.kubeconfig));
}

/** The kept log files of the apply function's pods that hold `text`: `<logs>/dynamo-system/<pod>/function.log`. */
function keptWith(logs: string, text: string): string[] {
  const dir = join(logs, "dynamo-system");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((pod) => pod.startsWith("poolrelay-apply-"))
    .map((pod) => join(dir, pod, "function.log"))
    .filter((f) => existsSync(f) && readFileSync(f, "utf8").includes(text));
}

describe("npm start", () => {
  it("installs the samples: llama, qwen and the selector shared go Ready on the real Relay, mixtral is reported not eligible; the function's log outlives its pod", async () => {
    const admin = await reconciling([]);
    const { state } = started!;
    // Ready needs one Relay replica listening, not both: the second may still be starting.
    expect(started!.output()).toMatch(
      /\nREADY inference\/llama: Ready=True \(Ready\) replicas [12]\/2 endpoint llama-pool-relay\.inference\.svc:5561\n/,
    );
    // READY speaks for llama alone: qwen and mixtral are reconciled on their own events, maybe later.
    const expected = (d: Dpr) =>
      d.metadata.name === "mixtral"
        ? condition(d, "Eligible")?.status === "False"
        : condition(d, "Ready")?.status === "True";
    let list = await admin.list<Dpr>("nvidia.com/v1alpha1", "DynamoPoolRelay", undefined);
    for (const settled = Date.now() + 180_000; Date.now() < settled && !list.every(expected);) {
      await new Promise((r) => setTimeout(r, 500));
      list = await admin.list<Dpr>("nvidia.com/v1alpha1", "DynamoPoolRelay", undefined);
    }
    expect(list.map((d) => `${d.metadata.namespace}/${d.metadata.name}`).sort()).toEqual([
      "inference/llama",
      "inference/mixtral",
      "inference/qwen",
      "inference/shared",
    ]);
    const byName = Object.fromEntries(list.map((d) => [d.metadata.name, d]));
    expect(condition(byName["llama"]!, "Ready")).toMatchObject({ status: "True", reason: "Ready" });
    expect(condition(byName["qwen"]!, "Ready")).toMatchObject({ status: "True", reason: "Ready" });
    // The selector's Relay serves two DGDs' workers (samples/selector.yaml), mistral left out.
    expect(condition(byName["shared"]!, "Ready")).toMatchObject({ status: "True", reason: "Ready" });
    expect(byName["shared"]!.status).toMatchObject({
      selectedDGDs: 2,
      eligibleDGDs: 2,
      workerNamespaces: ["inference-llama-a-5b1e9d20", "inference-llama-b-7c4a0f63"],
    });
    expect(condition(byName["mixtral"]!, "Eligible")).toMatchObject({
      status: "False",
      reason: "DiscoveryBackendNotKubernetes",
    });

    // The apply function's invocation for llama, printed from its pod's log as it ran, and kept.
    await until(
      "the apply of llama is printed",
      () => (/\n {2}\[apply\] \S+ inference\/llama -> Applied /.test(started!.output()) ? true : undefined),
      30_000,
    );
    const kept = await until(
      "the apply of llama is kept",
      () =>
        keptWith(state.logs, '"decision":"Applied"').find((f) => readFileSync(f, "utf8").includes('"name":"llama"')),
      30_000,
    );
    const pod = dirname(kept).split("/").pop()!;
    // Knative takes the function to zero when idle; the kubelet then deletes the pod's own log files.
    const podLogs = join(dirname(state.kubeconfig), "node", "pod-logs");
    // The kubelet removes the log files while the Pod object may still be terminating: wait for both.
    await until(
      `pod ${pod} and its log files gone`,
      async () =>
        readdirSync(podLogs).some((d) => d.startsWith(`dynamo-system_${pod}_`)) ||
        (await admin.get({ apiVersion: "v1", kind: "Pod", namespace: "dynamo-system", name: pod }))
          ? undefined
          : true,
      300_000,
    );
    expect(readFileSync(kept, "utf8")).toMatch(/^\{"function":"apply",.*"decision":"Applied".*"name":"llama"/m);
    await stop({ signal: "SIGINT", to: "group" });
  });

  it("installs no samples with --no-samples; an event posted to the Broker ingress it prints reaches its tap", async () => {
    const admin = await reconciling(["--no-samples"]);
    const { state } = started!;
    expect(started!.output()).not.toContain("installing samples/");
    expect(
      await admin.get({
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        name: "dynamopoolrelays.nvidia.com",
      }),
    ).toMatchObject({ spec: { group: "nvidia.com" } });
    expect(await admin.list("nvidia.com/v1alpha1", "DynamoPoolRelay", undefined)).toEqual([]);

    // From this host: into the ingress (a ClusterIP routed through the node), out through the filter pod to the tap.
    let tapped = "";
    const tap = request(state.tap, (res) => res.on("data", (c: Buffer) => (tapped += c.toString())));
    tap.on("error", () => {});
    tap.end();
    const id = `start-test-${process.pid}`;
    const res = await fetch(state.broker, {
      method: "POST",
      headers: {
        "ce-specversion": "1.0",
        "ce-id": id,
        "ce-type": "dev.poolrelay.test",
        "ce-source": "/test/start",
        "content-type": "application/json",
      },
      body: '{"hello":"broker"}',
    });
    expect(res.status).toBe(202);
    const line = await until(
      "the event at the tap",
      () => tapped.split("\n").find((l) => l.includes(`"id":"${id}"`)),
      30_000,
    );
    tap.destroy();
    expect(JSON.parse(line)).toMatchObject({
      id,
      type: "dev.poolrelay.test",
      source: "/test/start",
      data: { hello: "broker" },
    });
    await stop({ signal: "SIGTERM", to: "npm" });
  });
});
