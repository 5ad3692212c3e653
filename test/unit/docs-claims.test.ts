// Claims of the README and docs/ checked against the behaviour, with the expectations read from the
// documentation and the CRD YAML themselves (never from the code's own constants): the reserved env names, the
// DGD_API_VERSION setting, the admission messages `poolrelay render` reports, and the column
// `-o wide` adds.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { render } from "../../cli/render.ts";
import { InputError, type SourcedObject } from "../../cli/input.ts";
import { apply } from "../../functions/apply/handler.ts";
import type { Context } from "../../functions/runtime/handler.ts";
import { status } from "../../functions/status/handler.ts";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { parseConfig, type Config } from "../../shared/config.ts";
import { EventType, productEvent } from "../../shared/events.ts";
import { KubeClient, type KubeObject } from "../../shared/kube/client.ts";
import { ApiError } from "../../shared/kube/errors.ts";
import { usage } from "../../cli/usage.ts";
import { claim, configurationTable, docFiles } from "../docs-text.ts";
import { FakeKube } from "./fake-kube.ts";

const read = (f: string) => readFileSync(new URL(`../../${f}`, import.meta.url), "utf8");
const NOW = "2026-03-01T00:00:00Z";

/** A CEL rule of the CRD's x-kubernetes-validations. */
type Rule = { rule: string; message?: string; messageExpression?: string };
/** What these tests read of crds/nvidia.com_dynamopoolrelays.yaml. */
interface CrdFile {
  spec: {
    versions: {
      schema: {
        openAPIV3Schema: {
          "x-kubernetes-validations": Rule[];
          properties: {
            spec: {
              required: string[];
              properties: {
                env: { items: { "x-kubernetes-validations": Rule[] } };
                replicas: { minimum: number };
              };
            };
          };
        };
      };
      additionalPrinterColumns: { name: string; jsonPath: string; priority?: number }[];
    }[];
  };
}

const reconcile = (namespace: string, name: string): CloudEvent =>
  productEvent(
    EventType.Reconcile,
    { namespace, name, cause: "DGDChanged" },
    { source: "/test", cause: "r1", time: NOW },
  );
const context = (kube: KubeClient, config: Config): Context => ({
  kube,
  config,
  now: () => NOW,
  emit: async () => {},
  sleep: async () => {},
});

describe("the reserved env names, as docs/rules.md lists them", () => {
  // "Names the product sets are rejected in `spec.env`: DYN_DC_ID, ..., POD_UID."
  const listed = claim(/Names the product sets are rejected in `spec\.env`: ([A-Z_]+(?:, [A-Z_]+)*)\./)[1]!.split(", ");
  const config = parseConfig({});
  const dpr = (env: { name: string; value: string }[]) => ({
    apiVersion: "nvidia.com/v1alpha1",
    kind: "DynamoPoolRelay",
    metadata: { name: "g1", namespace: "team-a", uid: "u1", generation: 5 },
    spec: { image: "relay:1", clusterID: "c", env },
  });
  const dgd = {
    apiVersion: config.dgdApiVersion,
    kind: "DynamoGraphDeployment",
    metadata: { name: "g1", namespace: "team-a" },
    spec: { components: [{ name: "w", type: "worker" }] },
  };

  it("is the list docs/rules.md documents", () => {
    expect(listed).toHaveLength(13);
    expect(listed).toContain("DYN_DC_ID");
  });

  it.each(listed)("rejects a spec.env entry named %s with InvalidSpec, applying nothing", async (name) => {
    const kube = new FakeKube([
      dpr([
        { name: "DYN_LOG", value: "debug" },
        { name, value: "x" },
      ]),
      dgd,
    ]);
    const result = await apply(reconcile("team-a", "g1"), context(kube.client, config));
    expect(result.reply?.type).toBe(EventType.Rejected);
    expect(result.reply?.data).toMatchObject({
      reason: "InvalidSpec",
      generation: 5,
      message: expect.stringContaining(`the product sets ${name} itself`) as unknown,
    });
    expect(kube.ops("apply")).toEqual([]);
  });

  it("accepts a name it does not list", async () => {
    const kube = new FakeKube([
      dpr([
        { name: "DYN_LOG", value: "debug" },
        { name: "DYN_RELAY_EXPECTED_UNIQUE_BLOCKS", value: "4194304" },
      ]),
      dgd,
    ]);
    const result = await apply(reconcile("team-a", "g1"), context(kube.client, config));
    expect(result.reply?.type).toBe(EventType.Applied);
  });

  it("names every env the product itself sets on the Relay container", async () => {
    const kube = new FakeKube([dpr([]), dgd]);
    await apply(reconcile("team-a", "g1"), context(kube.client, config));
    const deployment = kube.ops("apply").find((c) => c.object.kind === "Deployment" && !c.options.dryRun)!
      .object as KubeObject & {
      spec: { template: { spec: { containers: { env: { name: string }[] }[] } } };
    };
    const set = deployment.spec.template.spec.containers[0]!.env.map((e) => e.name);
    expect(set.length).toBeGreaterThan(5);
    expect(set.filter((n) => !listed.includes(n))).toEqual([]);
  });
});

describe("DGD_API_VERSION=nvidia.com/v1alpha1", () => {
  // The Configuration table: default `nvidia.com/v1beta1`; `nvidia.com/v1alpha1` for older Dynamo operators.
  const documented = configurationTable().find((r) => r.variable === "DGD_API_VERSION")!;
  const fallback = /^`([^`]+)`/.exec(documented.default)![1];
  const older = /`([^`]+)` \(older Dynamo operators/.exec(documented.range)![1];

  // The deprecated v1alpha1 shape (spec.services), as an older operator serves it.
  const sample = parseAllDocuments(read("samples/rollout.yaml")).map((d) => d.toJS() as KubeObject);
  const dgd = sample.find((o) => o.kind === "DynamoGraphDeployment")!;
  const dpr = {
    ...sample.find((o) => o.kind === "DynamoPoolRelay")!,
    metadata: { name: "qwen", namespace: "inference", uid: "u1", generation: 1, resourceVersion: "3" },
  };
  const dgdPath = (version: string) => `/apis/${version}/namespaces/inference/dynamographdeployments/qwen`;

  /** The real adapter, answering from a table instead of a socket: what it is asked for is the URL it built. */
  class Api extends KubeClient {
    readonly requests: string[] = [];
    constructor() {
      super({ server: "https://kube.invalid", httpsOptions: async () => ({}) });
    }
    override async request(method: string, path: string, body?: unknown): Promise<unknown> {
      this.requests.push(`${method} ${path}`);
      if (method === "GET" && path === "/apis/nvidia.com/v1alpha1/namespaces/inference/dynamopoolrelays/qwen")
        return dpr;
      if (method === "GET" && path === dgdPath(older!)) return dgd;
      if (method === "GET" && path.startsWith("/apis/discovery.k8s.io/v1/namespaces/inference/endpointslices?"))
        return { items: [] };
      if (method === "GET") throw new ApiError(404, "NotFound", `${path} not found`);
      return { ...(body as object), metadata: { ...(body as KubeObject).metadata, uid: "new" } };
    }
  }

  it("is the Configuration table's older version, the one samples/rollout.yaml's DGD has", () => {
    expect({ fallback, older }).toEqual({ fallback: "nvidia.com/v1beta1", older: "nvidia.com/v1alpha1" });
    expect(dgd.apiVersion).toBe(older);
  });

  it.each([
    { fn: "apply", handler: apply, event: reconcile("inference", "qwen") },
    {
      fn: "status",
      handler: status,
      event: productEvent(
        EventType.Applied,
        { namespace: "inference", name: "qwen", uid: "u1", generation: 1, applied: [], unchanged: [], skipped: [] },
        { source: "/t", cause: "c", time: NOW },
      ),
    },
  ])("$fn reads the DGD at /apis/nvidia.com/v1alpha1/... and decides from it", async ({ handler, event }) => {
    const api = new Api();
    const result = await handler(event, context(api, parseConfig({ DGD_API_VERSION: older })));
    const dgdReads = api.requests.filter((r) => r.includes("/dynamographdeployments/"));
    expect(dgdReads).toEqual([`GET ${dgdPath(older!)}`]);
    // Read and used: eligible, with both rollout generations' worker namespaces.
    expect(result.decision).not.toBe("Gone");
    if (handler === apply) {
      expect(result.reply?.type).toBe(EventType.Applied);
      const configMap = api.requests.find((r) =>
        r.startsWith("PATCH /api/v1/namespaces/inference/configmaps/qwen-pool-relay"),
      );
      expect(configMap).toBeDefined();
    } else {
      expect(result.fields).toMatchObject({ reason: expect.not.stringMatching(/NotEligible|DGDNotFound/) as unknown });
    }
  });

  it("reads nvidia.com/v1beta1 when it is not set", async () => {
    const api = new Api();
    await apply(reconcile("inference", "qwen"), context(api, parseConfig({})));
    expect(api.requests.filter((r) => r.includes("/dynamographdeployments/"))).toEqual([`GET ${dgdPath(fallback!)}`]);
  });
});

describe("admission messages: `poolrelay render` reports what the CRD's rules say", () => {
  const crd = parse(read("crds/nvidia.com_dynamopoolrelays.yaml")) as CrdFile;
  const schema = crd.spec.versions[0]!.schema.openAPIV3Schema;
  const spec = schema.properties.spec;
  const nameRule = schema["x-kubernetes-validations"].find((r) => r.rule.includes("self.metadata.name"))!;
  const envRule = spec.properties.env.items["x-kubernetes-validations"][0]!;
  /** The CRD's messageExpression for one entry: a concatenation of string literals and `self.name`. */
  const envMessage = (name: string) =>
    envRule
      .messageExpression!.split(" + ")
      .map((part) => (part === "self.name" ? name : /^'(.*)'$/.exec(part)![1]))
      .join("");

  function renderError(dprFields: Record<string, unknown>): string {
    const object = {
      apiVersion: "nvidia.com/v1alpha1",
      kind: "DynamoPoolRelay",
      metadata: { name: "g1", namespace: "team-a" },
      spec: { image: "relay:1", clusterID: "c" },
      ...dprFields,
    };
    const objects: SourcedObject[] = [{ object, origin: "dpr.yaml#1" }];
    try {
      render(objects, { namespace: "default", defaults: { discoveryBackend: "kubernetes" }, now: NOW });
    } catch (err) {
      if (err instanceof InputError) return err.message;
      throw err;
    }
    throw new Error("render accepted it");
  }

  it("the CRD carries the rules docs/rules.md quotes", () => {
    const quoted = claim(
      /\*\*Admission messages\*\* \(the CRD's schema and CEL rules; `poolrelay render` reports the same field messages[^)]*\): (.*?) #/,
    )[1]!;
    expect(quoted).toContain(`a name that cannot form the Service name: \`${nameRule.message}\``);
    expect(quoted).toContain(`a reserved env name: \`spec.env[0]: Invalid value: ${envMessage("DYN_DC_ID")}\``);
    expect(spec.required).toContain("image");
    expect(spec.properties.replicas.minimum).toBe(0);
  });

  it("a reserved env name: render gives the CRD rule's message text", () => {
    expect(
      renderError({ spec: { image: "relay:1", clusterID: "c", env: [{ name: "DYN_DC_ID", value: "x" }] } }),
    ).toContain(envMessage("DYN_DC_ID"));
  });

  // test/integration/crd.test.ts compares render with a real API server's answers, case by case.
  it("a name that cannot form the Service name: render gives the CRD rule's message", () => {
    expect(renderError({ metadata: { name: "with.dot", namespace: "team-a" } })).toContain(nameRule.message!);
  });

  it("two reserved env names: render gives the CRD rule's message for each entry, at its index", () => {
    const error = renderError({
      spec: {
        image: "relay:1",
        clusterID: "c",
        env: [
          { name: "DYN_DC_ID", value: "x" },
          { name: "OK", value: "1" },
          { name: "POD_UID", value: "y" },
        ],
      },
    });
    expect(error).toContain(`spec.env[0]: Invalid value: ${envMessage("DYN_DC_ID")}`);
    expect(error).toContain(`spec.env[2]: Invalid value: ${envMessage("POD_UID")}`);
  });

  it("a missing image: render says `spec.image: Required value`, as the CRD's `required` makes the API server say", () => {
    expect(renderError({ spec: { clusterID: "c" } })).toContain("spec.image: Required value");
  });

  it("negative replicas: render says `should be greater than or equal to <minimum>`, as the CRD's `minimum` makes the API server say", () => {
    // docs/rules.md: `spec.replicas … should be greater than or equal to 0`.
    expect(renderError({ spec: { image: "relay:1", clusterID: "c", replicas: -1 } })).toMatch(
      new RegExp(`spec\\.replicas\\b.* should be greater than or equal to ${spec.properties.replicas.minimum}`),
    );
  });
});

describe("kubectl get dpr, and -o wide", () => {
  const columns = (parse(read("crds/nvidia.com_dynamopoolrelays.yaml")) as CrdFile).spec.versions[0]!
    .additionalPrinterColumns;

  it("shows Ready, Replicas, Endpoint and Age by default, as docs/rules.md says", () => {
    const [, shown] = claim(
      /`kubectl get dpr` shows (Ready, Replicas \(ready\/desired, as `kubectl get deploy` shows READY\), Endpoint and Age)/,
    );
    const named = shown!.replace(/ \([^)]*\)/g, "").split(/, | and /);
    expect(columns.filter((c) => (c.priority ?? 0) === 0).map((c) => c.name)).toEqual(named);
    expect(columns.find((c) => c.name === "Ready")!.jsonPath).toBe('.status.conditions[?(@.type=="Ready")].status');
  });

  it("adds the Ready condition's reason, the generation, the observed generation and the namespace with -o wide (priority 1)", () => {
    claim(
      /\(`-o wide` adds the Ready reason, the generation, the observed generation and\s+the namespace: the four cells the resync lists, with Name and Ready, instead of the objects; and,\s+for a selector, how many DGDs it selects and how many of them are eligible/,
    );
    expect(columns.filter((c) => (c.priority ?? 0) > 0)).toEqual([
      expect.objectContaining({
        name: "Reason",
        priority: 1,
        jsonPath: '.status.conditions[?(@.type=="Ready")].reason',
      }),
      expect.objectContaining({ name: "Generation", priority: 1, jsonPath: ".metadata.generation" }),
      expect.objectContaining({ name: "Observed", priority: 1, jsonPath: ".status.observedGeneration" }),
      expect.objectContaining({ name: "Namespace", priority: 1, jsonPath: ".metadata.namespace" }),
      expect.objectContaining({ name: "Selected", priority: 1, jsonPath: ".status.selectedDGDs" }),
      expect.objectContaining({ name: "Eligible", priority: 1, jsonPath: ".status.eligibleDGDs" }),
    ]);
  });
});

describe("the status function's batch period, as the docs state it", () => {
  it("is the default of STATUS_BATCH_MS, in docs/rules.md and the Configuration table", () => {
    const inPrinciples = Number(claim(/\(`STATUS_BATCH_MS`, default (\d+): none/)[1]);
    const inConfiguration = Number(
      /^`(\d+)`/.exec(configurationTable().find((r) => r.variable === "STATUS_BATCH_MS")!.default)![1],
    );
    expect([inPrinciples, inConfiguration]).toEqual([parseConfig({}).statusBatchMs, parseConfig({}).statusBatchMs]);
    expect(() => parseConfig({ STATUS_BATCH_MS: "10001" })).toThrow(/STATUS_BATCH_MS/);
    expect(parseConfig({ STATUS_BATCH_MS: "0" }).statusBatchMs).toBe(0);
  });
});

describe("the poolrelay synopses the README and docs/cli.md show", () => {
  /** `poolrelay --help`'s synopsis lines, whitespace collapsed. */
  const synopses = /^Usage:\n([\s\S]*?)\n {2}poolrelay <command> --help/
    .exec(usage())![1]!
    .split("\n")
    .map((l) => l.trim().replace(/\s+/g, " "));
  const blocks = Object.entries(docFiles()).flatMap(([file, text]) =>
    [...text.matchAll(/```\n(poolrelay [\s\S]*?)```/g)].map((m) => [file, m[1]!.replace(/\s+/g, " ")] as const),
  );

  it("are in a usage block of the README and of docs/cli.md", () => {
    expect(synopses.length).toBeGreaterThanOrEqual(6);
    expect(blocks.map(([file]) => file).sort()).toEqual(["README.md", "docs/cli.md"]);
  });

  it.each(blocks)("%s lists every synopsis poolrelay --help prints", (_file, block) => {
    for (const line of synopses) expect(block).toContain(line);
  });
});
