// The poolrelay CLI as a user runs it: a real process, real files, exit codes and output.
import { CloudEvent, HTTP } from "cloudevents";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import type { RenderResult } from "../../cli/render.ts";
import type { KubeObject } from "../../shared/render/index.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const NOW = "2026-01-01T00:00:00Z";

function poolrelay(args: string[], input?: string, env: NodeJS.ProcessEnv = process.env) {
  const r = spawnSync(process.execPath, ["bin/poolrelay.js", ...args], { cwd: root, input, encoding: "utf8", env });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The same, while this process serves what it talks to (spawnSync would block the server). */
function poolrelayAsync(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["bin/poolrelay.js", ...args], { cwd: root });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const samples = readdirSync(`${root}/samples`)
  .filter((f) => f.endsWith(".yaml"))
  .sort();

describe("poolrelay render", () => {
  it.each(samples)(
    "renders samples/%s exactly as its golden file (UPDATE_GOLDEN=1 rewrites it, then fails so the change is reviewed)",
    (sample) => {
      const { code, stdout, stderr } = poolrelay(["render", "-f", `samples/${sample}`, "--now", NOW]);
      expect(stderr).toBe("");
      expect(code).toBe(0);
      const golden = `${root}/test/golden/${sample}`;
      if (process.env["UPDATE_GOLDEN"]) {
        writeFileSync(golden, stdout);
        // A run that rewrites the golden compares nothing: it must not pass, or a wrong render would
        // be accepted unseen.
        expect.fail(
          `UPDATE_GOLDEN is set: test/golden/${sample} was rewritten from this render. Review the change with \`git diff test/golden\`, then run the tests again without UPDATE_GOLDEN.`,
        );
      }
      expect(stdout).toBe(readFileSync(golden, "utf8"));
    },
  );

  it("prints the six objects for the eligible sample, and they parse as YAML", () => {
    const docs = parseAllDocuments(poolrelay(["render", "-f", "samples/eligible.yaml", "--now", NOW]).stdout).map(
      (d) => d.toJS() as KubeObject,
    );
    expect(docs.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([
      "ServiceAccount/llama-pool-relay",
      "Role/llama-pool-relay",
      "RoleBinding/llama-pool-relay",
      "ConfigMap/llama-pool-relay",
      "Deployment/llama-pool-relay",
      "Service/llama-pool-relay",
    ]);
  });

  it("lists both worker generations of the mid-rollout sample in the sources document", () => {
    const [result] = JSON.parse(
      poolrelay(["render", "-f", "samples/rollout.yaml", "-o", "json", "--now", NOW]).stdout,
    ) as RenderResult[];
    const cm = result!.apply.find((o: { kind: string }) => o.kind === "ConfigMap") as
      (KubeObject & { data: { "sources.json": string } }) | undefined;
    expect((JSON.parse(cm!.data["sources.json"]) as { sources: unknown }).sources).toEqual([
      { namespace: "inference-qwen-a1b2c3d4" },
      { namespace: "inference-qwen-e5f6a7b8" },
    ]);
    expect(result!.status.workerNamespaces).toEqual(["inference-qwen-a1b2c3d4", "inference-qwen-e5f6a7b8"]);
  });

  it("prints the withdrawal and status for the ineligible sample", () => {
    const [result] = JSON.parse(
      poolrelay(["render", "-f", "samples/ineligible.yaml", "-o", "json", "--now", NOW]).stdout,
    ) as RenderResult[];
    expect(result).toMatchObject({
      dynamoPoolRelay: "inference/mixtral",
      action: "withdraw",
      reason: "DiscoveryBackendNotKubernetes",
      apply: [],
      withdraw: [{ kind: "Service", namespace: "inference", name: "mixtral-pool-relay" }],
    });
    expect(result!.status.conditions!.find((c: { type: string }) => c.type === "Eligible")!.status).toBe("False");
  });

  it("reads stdin and applies --default-discovery-backend", () => {
    const input = readFileSync(`${root}/samples/eligible.yaml`, "utf8");
    const [result] = JSON.parse(
      poolrelay(["render", "-f", "-", "-o", "json", "--default-discovery-backend", "etcd", "--now", NOW], input).stdout,
    ) as RenderResult[];
    expect(result).toMatchObject({ action: "withdraw", reason: "DiscoveryBackendNotKubernetes" });
  });

  it("fills a missing namespace from -n", () => {
    const input =
      "apiVersion: nvidia.com/v1alpha1\nkind: DynamoPoolRelay\nmetadata: {name: g}\nspec: {image: r, clusterID: c}\n";
    const [result] = JSON.parse(
      poolrelay(["render", "-f", "-", "-o", "json", "-n", "prod", "--now", NOW], input).stdout,
    ) as RenderResult[];
    expect(result).toMatchObject({ dynamoPoolRelay: "prod/g", reason: "DGDNotFound" });
  });

  it.each([
    {
      name: "an invalid DynamoPoolRelay",
      input:
        "apiVersion: nvidia.com/v1alpha1\nkind: DynamoPoolRelay\nmetadata: {name: g, namespace: n}\nspec: {clusterID: c, env: [{name: POD_NAME, value: x}]}\n",
      expected: /^poolrelay: <stdin>#1: DynamoPoolRelay\.nvidia\.com "g" is invalid: spec\.image: Required value\n$/,
    },
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
    {
      name: "a bad -o",
      args: ["render", "-f", "samples", "-o", "xml"],
      expected: /-o must be yaml or json, got "xml"/,
    },
    {
      name: "an unknown backend",
      args: ["render", "-f", "samples", "--default-discovery-backend", "zk"],
      expected: /must be one of kubernetes, etcd, got "zk"/,
    },
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
    const results = JSON.parse(
      poolrelay(["render", "-f", "samples", "-o", "json", "--now", NOW]).stdout,
    ) as RenderResult[];
    expect(results.map((r: { dynamoPoolRelay: string; action: string }) => `${r.dynamoPoolRelay}:${r.action}`)).toEqual(
      ["inference/llama:apply", "inference/mixtral:withdraw", "inference/qwen:apply", "inference/shared:apply"],
    );
    expect(parse(JSON.stringify(results))).toEqual(results);
  });
});

describe("poolrelay help and version", () => {
  const commands = ["render", "cluster", "start", "record", "replay"];

  it.each(commands.flatMap((c) => ["--help", "-h"].map((flag) => ({ c, flag }))))(
    "$c $flag prints its usage on stdout and exits 0, doing nothing else",
    ({ c, flag }) => {
      // Help wins over what would otherwise be a usage error or start work.
      const r = poolrelay([c, ...(c === "cluster" ? ["up"] : []), "--bogus", flag]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^Usage:\\n  poolrelay ${c} `));
      expect(r.stdout).toMatch(/\nOptions:\n[^]*-h, --help +print this help\n$/);
      expect(poolrelay(["help", c]).stdout).toBe(r.stdout);
    },
  );

  it.each(["--help", "-h", "help"])("%s prints every command's synopsis and exits 0", (flag) => {
    const r = poolrelay([flag]);
    expect(r.code).toBe(0);
    for (const c of commands) expect(r.stdout).toContain(`\n  poolrelay ${c} `);
  });

  it("--version prints the version of package.json", () => {
    const r = poolrelay(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `${(JSON.parse(readFileSync(`${root}/package.json`, "utf8")) as { version: string }).version}\n`,
    );
  });

  it("exits 2 with the command's own usage on a usage error", () => {
    const r = poolrelay(["replay", "x.jsonl"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^poolrelay: replay needs --to <url>\n\nUsage:\n {2}poolrelay replay /);
    expect(r.stderr).not.toContain("poolrelay render");
  });
});

/** A Broker tap that streams these structured events, then closes. */
async function tapOf(events: CloudEvent<unknown>[]) {
  const server = createServer((_, res) => {
    res
      .writeHead(200, { "content-type": "application/x-ndjson" })
      .end(events.map((e) => `${JSON.stringify(e)}\n`).join(""));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/events`,
    close: () => new Promise((r) => server.close(r)),
  };
}

const tapped = ["a", "b"].map(
  (id) =>
    new CloudEvent<unknown>({
      id,
      type: "dev.knative.sources.ping",
      source: "/apis/v1/namespaces/dynamo-system/pingsources/poolrelay-resync",
      time: "2026-12-01T00:10:00.475Z",
      data: { resync: true },
    }),
);
const strict = (e: unknown) => new CloudEvent<unknown>({ ...(e as CloudEvent<unknown>) }, true);

describe("poolrelay record", () => {
  const dir = mkdtempSync(join(tmpdir(), "poolrelay-record-cli-"));

  it("writes JSON Lines to --output-file by default, each line an event the SDK reads strictly", async () => {
    const tap = await tapOf(tapped);
    const file = join(dir, "events.jsonl");
    const r = await poolrelayAsync(["record", "--from", tap.url, "--output-file", file]);
    await tap.close();
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/poolrelay: 2 events written to \S*events\.jsonl \(the tap closed\)\n$/);
    const lines = readFileSync(file, "utf8").trimEnd().split("\n");
    expect(
      lines.map((l) =>
        strict(HTTP.toEvent({ headers: { "content-type": "application/cloudevents+json" }, body: l })).toJSON(),
      ),
    ).toEqual(tapped.map((e) => e.toJSON()));
  });

  it("writes one batch array with -o json, that the SDK reads as a batch", async () => {
    const tap = await tapOf(tapped);
    const file = join(dir, "events.json");
    const r = await poolrelayAsync(["record", "--from", tap.url, "--output-file", file, "-o", "json"]);
    await tap.close();
    expect(r.code).toBe(0);
    const batch = HTTP.toEvent({
      headers: { "content-type": "application/cloudevents-batch+json" },
      body: readFileSync(file, "utf8"),
    });
    expect((batch as CloudEvent<unknown>[]).map((e) => strict(e).toJSON())).toEqual(tapped.map((e) => e.toJSON()));
  });

  it("writes to stdout without --output-file", async () => {
    const tap = await tapOf(tapped.slice(0, 1));
    const r = await poolrelayAsync(["record", "--from", tap.url]);
    await tap.close();
    expect(r.code).toBe(0);
    expect(
      strict(HTTP.toEvent({ headers: { "content-type": "application/cloudevents+json" }, body: r.stdout })).toJSON(),
    ).toEqual(tapped[0]!.toJSON());
    expect(r.stderr).toMatch(/poolrelay: 1 events written to stdout \(the tap closed\)\n$/);
  });

  it.each([
    {
      name: "the old -o FILE",
      args: ["record", "-o", "events.jsonl"],
      error: /-o must be jsonl or json, got "events\.jsonl" \(to write to a file: --output-file FILE\)/,
    },
    {
      name: "a --from that is no URL",
      args: ["record", "--from", "localhost:8080"],
      error: /--from must be an http:\/\/ or https:\/\/ URL, got "localhost:8080"/,
    },
  ])("exits 2 on $name", ({ args, error }) => {
    const r = poolrelay(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(error);
  });
});

describe("input errors", () => {
  const dir = mkdtempSync(join(tmpdir(), "poolrelay-replay-cli-"));

  it("exits 1 before sending anything, naming the file, line, event and attribute of every problem", () => {
    const file = join(dir, "bad.jsonl");
    const ok = { specversion: "1.0", id: "1", type: "t", source: "/s" };
    writeFileSync(
      file,
      [
        JSON.stringify(ok),
        "{nope",
        JSON.stringify({ ...ok, id: "3", time: "noon" }),
        JSON.stringify({ ...ok, id: "4", source: "a b" }),
      ].join("\n"),
    );
    // Nothing listens on port 9: had it sent anything, the error would be a refusal.
    const r = poolrelay(["replay", file, "--to", "http://127.0.0.1:9/"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      [
        `poolrelay: ${file}:2: invalid JSON: Expected property name or '}' in JSON at position 1 (line 1 column 2)`,
        `${file}:3: invalid CloudEvent "3": time must be an RFC 3339 timestamp, got "noon"`,
        `${file}:4: invalid CloudEvent "4": source must match format "uri-reference", got "a b"`,
        "",
      ].join("\n"),
    );
  });

  it.each([
    { name: "cluster down", args: ["cluster", "down"], file: "cluster.json" },
    { name: "record", args: ["record"], file: "start.json" },
  ])("$name exits 1 naming a state file it cannot read", ({ args, file }) => {
    const cache = mkdtempSync(join(tmpdir(), "poolrelay-state-"));
    mkdirSync(join(cache, "dynamo-pool-relay"));
    writeFileSync(join(cache, "dynamo-pool-relay", file), "{");
    const r = poolrelay(args, undefined, { ...process.env, XDG_CACHE_HOME: cache });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `poolrelay: ${join(cache, "dynamo-pool-relay", file)}: invalid JSON: Expected property name or '}' in JSON at position 1 (line 1 column 2)\n`,
    );
  });

  it("exits 2 on a --to that is no URL", () => {
    const r = poolrelay(["replay", "x.jsonl", "--to", "broker"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--to must be an http:\/\/ or https:\/\/ URL, got "broker"/);
  });
});
