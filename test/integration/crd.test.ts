// The DynamoPoolRelay CRD on a real kube-apiserver, seen through the built kubectl: it installs
// with the README's command, prints the promised columns, explains every field, scales through
// its scale subresource (kubectl scale, a HorizontalPodAutoscaler) and rejects invalid objects at
// admission with the messages docs/rules.md documents.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { parse } from "yaml";
import { ensureBinaries } from "../../dev/control-plane/binaries.ts";
import { CRD_PATH } from "../../scripts/generated.ts";
import { ApiError } from "../../shared/kube/errors.ts";
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import { candidatesOf, type ResyncCandidate, type TablePage } from "../../shared/resync.ts";
import { TEST_MANAGER, adminClient, dprObject, eventually, freshNamespace } from "./helpers.ts";
import { getDpr, published, settledDpr } from "./pipeline-helpers.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

let client: KubeClient;
let ns: string;
beforeAll(async () => {
  client = await adminClient();
  ns = await freshNamespace("crd");
});

/** The built kubectl against the test cluster, from the repository root (as the README's commands run). */
function kubectl(...args: string[]) {
  return spawnSync(ensureBinaries().kubectl, [`--kubeconfig=${inject("kubeconfig")}`, ...args], {
    encoding: "utf8",
    cwd: root,
  });
}

/** kubectl explain wraps and indents descriptions; compare text with whitespace runs as one space. */
const squash = (text: string) => text.replace(/\s+/g, " ").trim();

type Schema = {
  description?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
};

/**
 * The field paths whose `kubectl explain` shows descriptions beyond their parent's field list: the
 * fields of objects (also through list items), and the item or value description of lists and maps.
 */
function explained(node: Schema, path: string[]): [string[], Schema][] {
  const fields = Object.entries((node.items ?? node).properties ?? {});
  const own =
    fields.length > 0 || node.items !== undefined || typeof node.additionalProperties === "object"
      ? [[path, node] as [string[], Schema]]
      : [];
  return [...own, ...fields.flatMap(([name, field]) => explained(field, [...path, name]))];
}

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
    const list = (await client.request("GET", "/apis/nvidia.com/v1alpha1")) as {
      resources: { name: string; shortNames?: string[]; categories?: string[] }[];
    };
    expect(list.resources.find((r) => r.name === "dynamopoolrelays")).toMatchObject({
      shortNames: ["dpr"],
      categories: ["dynamo"],
    });
  });

  it("defaults replicas to 2 and shows Ready, Replicas, Endpoint and Age as kubectl get dpr does (-o wide adds Reason, Generation, Observed and Namespace)", async () => {
    await client.apply(dprObject(ns, "columns"), TEST_MANAGER);
    const got = await client.get<{ spec: { replicas: number } }>({
      apiVersion: "nvidia.com/v1alpha1",
      kind: "DynamoPoolRelay",
      namespace: ns,
      name: "columns",
    });
    expect(got?.spec.replicas).toBe(2);
    const table = (await client.request(
      "GET",
      `/apis/nvidia.com/v1alpha1/namespaces/${ns}/dynamopoolrelays`,
      undefined,
      undefined,
      "application/json;as=Table;v=v1;g=meta.k8s.io",
    )) as { columnDefinitions: { name: string; priority: number }[]; rows: { cells: unknown[] }[] };
    expect(table.columnDefinitions.filter((c) => c.priority === 0).map((c) => c.name)).toEqual([
      "Name",
      "Ready",
      "Replicas",
      "Endpoint",
      "Age",
    ]);
    expect(table.rows[0]?.cells[0]).toBe("columns");
    // Ready over desired, as kubectl get deploy shows READY: a string, not a count.
    expect(table.columnDefinitions.find((c) => c.name === "Replicas")).toMatchObject({ type: "string" });
    // And as people see it.
    const get = kubectl("get", "dpr", "-n", ns);
    expect(get.stderr).toBe("");
    expect(get.stdout.split("\n")[0]).toMatch(/^NAME\s+READY\s+REPLICAS\s+ENDPOINT\s+AGE$/);
    expect(get.stdout).toMatch(/\ncolumns\s/);
    const wide = kubectl("get", "dpr", "-n", ns, "-o", "wide");
    expect(wide.stderr).toBe("");
    expect(wide.stdout.split("\n")[0]).toMatch(
      /^NAME\s+READY\s+REPLICAS\s+ENDPOINT\s+REASON\s+GENERATION\s+OBSERVED\s+NAMESPACE\s+SELECTED\s+ELIGIBLE\s+AGE$/,
    );
    // Generation 1, observed or not yet (blank), and the namespace.
    expect(wide.stdout).toMatch(new RegExp(`\\ncolumns\\s.*\\s1\\s+(1\\s+)?${ns}\\s`));
  });

  it("lists, as the resync does, a Table of cells without the objects, in pages, from which candidatesOf reads what the objects hold", async () => {
    const here = await freshNamespace("resync-table");
    for (const name of ["a", "b", "c"]) await client.apply(dprObject(here, name), TEST_MANAGER);
    // An edited spec: generation 2.
    await client.apply(dprObject(here, "c", { replicas: 3 }), TEST_MANAGER);
    type Full = {
      metadata: { namespace: string; name: string; generation: number };
      status?: { observedGeneration?: number; conditions?: { type: string; status: string; reason: string }[] };
    };
    const fields = (o: Full) => {
      const ready = o.status?.conditions?.find((c) => c.type === "Ready");
      const { namespace, name, generation } = o.metadata;
      return {
        namespace,
        name,
        generation,
        observed: o.status?.observedGeneration,
        ready: ready?.status,
        reason: ready?.reason,
      };
    };
    const cells = (c: ResyncCandidate) => {
      const ready = c.status?.conditions?.find((x) => x.type === "Ready");
      return { ...c.metadata, observed: c.status?.observedGeneration, ready: ready?.status, reason: ready?.reason };
    };
    // The product reconciles them meanwhile (no DGD: NotEligible, then nothing more to write):
    // the Table is listed once they have settled, and each row's cells are compared with the
    // object's fields.
    const full = await eventually("the three are NotEligible at their generation", async () => {
      const full = await client.list<Full>("nvidia.com/v1alpha1", "DynamoPoolRelay", here);
      return (
        full.length === 3 &&
        full.every(
          (o) => o.status?.observedGeneration === o.metadata.generation && fields(o).reason === "NotEligible",
        ) &&
        full
      );
    });
    expect(full.map(fields)).toEqual([
      { namespace: here, name: "a", generation: 1, observed: 1, ready: "False", reason: "NotEligible" },
      { namespace: here, name: "b", generation: 1, observed: 1, ready: "False", reason: "NotEligible" },
      { namespace: here, name: "c", generation: 2, observed: 2, ready: "False", reason: "NotEligible" },
    ]);
    const pages: TablePage[] = [];
    for await (const page of client.listTablePages<TablePage>("nvidia.com/v1alpha1", "DynamoPoolRelay", 2))
      pages.push(page);
    const listed = pages.flatMap((p) => candidatesOf(p)).filter((c) => c.metadata.namespace === here);
    expect(listed.map(cells)).toEqual(full.map(fields));
    // Pages of 2 over at least three objects: the continue token was followed. No object in any row.
    expect(pages.length).toBeGreaterThanOrEqual(2);
    expect(pages.flatMap((p) => p.rows ?? []).length).toBeGreaterThanOrEqual(3);
    expect(pages.flatMap((p) => p.rows ?? []).filter((r) => (r as { object?: unknown }).object != null)).toEqual([]);
  });

  it("installs with exactly the command the README documents, kubectl apply -k crds/ (server dry-run); -f would fail on crds/kustomization.yaml", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    expect(readme).not.toMatch(/kubectl apply -f crds/);
    const documented = /`(kubectl apply -k crds\/)`/.exec(readme)?.[1];
    expect(documented).toBe("kubectl apply -k crds/");
    const apply = kubectl(...documented!.split(" ").slice(1), "--dry-run=server");
    expect(apply.status, apply.stderr).toBe(0);
    expect(apply.stdout).toMatch(
      /^customresourcedefinition\.apiextensions\.k8s\.io\/dynamopoolrelays\.nvidia\.com (created|configured|unchanged) \(server dry run\)$/m,
    );
    // Why the README says -k: -f sends the kustomization itself to the API server, which has no such kind.
    const withF = kubectl("apply", "-f", "crds/", "--dry-run=server");
    expect(withF.status).not.toBe(0);
    expect(withF.stderr).toMatch(/"crds\/kustomization\.yaml": no matches for kind "Kustomization"/);
  });

  it("kubectl explain shows a description for every field, list item and map value, nested ones included", () => {
    const crd = parse(readFileSync(CRD_PATH, "utf8")) as {
      spec: { versions: { schema: { openAPIV3Schema: Schema } }[] };
    };
    const schema = crd.spec.versions[0]!.schema.openAPIV3Schema;
    const paths = explained(schema, []);
    expect(paths.map(([p]) => p.join("."))).toEqual(
      expect.arrayContaining([
        "",
        "spec",
        "spec.env",
        "spec.resources",
        "spec.resources.requests",
        "spec.tolerations",
        "status.conditions",
      ]),
    );
    for (const [path, node] of paths) {
      const what = ["dynamopoolrelays", ...path].join(".");
      const explain = kubectl("explain", what);
      expect(explain.status, `${what}: ${explain.stderr}`).toBe(0);
      const text = squash(explain.stdout);
      expect(text, what).not.toContain("<no description>");
      expect(text, what).not.toContain("<empty>");
      // The node's own description, with its items' or values' (kubectl explain shows them together).
      const value =
        node.items ?? (typeof node.additionalProperties === "object" ? node.additionalProperties : undefined);
      for (const described of value ? [node, value] : [node])
        expect(text, what).toContain(squash(described.description ?? "(none in the CRD)"));
      for (const [name, field] of Object.entries((node.items ?? node).properties ?? {})) {
        // The API server publishes the standard descriptions of these, not the CRD's.
        if (path.length === 0 && ["apiVersion", "kind", "metadata"].includes(name)) continue;
        expect(text, `${what}.${name}`).toContain(squash(field.description ?? "(none in the CRD)"));
      }
    }
  });

  it("kubectl scale dpr sets spec.replicas; the scale subresource reports the replicas and the Relay pods' selector; Replicas shows ready/desired", async () => {
    const scaleNs = await freshNamespace("scale");
    await published(scaleNs);
    await settledDpr(scaleNs, "g1", "shows 2/2 Relay pods Ready", (d) => d.status?.["readyOfDesired"] === "2/2");
    expect(kubectl("get", "dpr", "g1", "-n", scaleNs).stdout).toMatch(/\ng1\s+\S+\s+2\/2\s/);

    const scale = kubectl("scale", "dpr", "g1", "-n", scaleNs, "--replicas=3");
    expect(scale.status, scale.stderr).toBe(0);
    expect(scale.stdout).toMatch(/dynamopoolrelay\.nvidia\.com\/g1 scaled/);
    expect((await getDpr(client, scaleNs, "g1")).spec).toMatchObject({ replicas: 3 });

    // The product follows: a third Relay pod, Ready, and the status says so.
    await settledDpr(
      scaleNs,
      "g1",
      "shows 3/3 Relay pods Ready",
      (d) => d.status?.["readyOfDesired"] === "3/3" && d.status?.["replicas"] === 3,
    );
    expect(kubectl("get", "dpr", "g1", "-n", scaleNs).stdout).toMatch(/\ng1\s+\S+\s+3\/3\s/);
    const getScale = kubectl("get", "dpr", "g1", "-n", scaleNs, "--subresource=scale", "-o", "json");
    expect(getScale.status, getScale.stderr).toBe(0);
    const dprScale = JSON.parse(getScale.stdout) as { status: { selector: string } };
    expect(dprScale).toMatchObject({
      kind: "Scale",
      spec: { replicas: 3 },
      status: { replicas: 3, selector: "app.kubernetes.io/instance=g1,app.kubernetes.io/name=dynamo-pool-relay" },
    });
    // The same selector, in the same form, as the API server reports for the Relay Deployment.
    const deployScale = (await client.request(
      "GET",
      `/apis/apps/v1/namespaces/${scaleNs}/deployments/g1-pool-relay/scale`,
    )) as { status: { selector: string } };
    expect(dprScale.status.selector).toBe(deployScale.status.selector);
  });

  it("a HorizontalPodAutoscaler scales a DynamoPoolRelay through its scale subresource", async () => {
    await client.apply(dprObject(ns, "autoscaled"), TEST_MANAGER);
    // Below minReplicas the HPA controller scales without metrics (none are served here).
    const hpa = await client.apply<KubeObject>(
      {
        apiVersion: "autoscaling/v2",
        kind: "HorizontalPodAutoscaler",
        metadata: { name: "autoscaled", namespace: ns },
        spec: {
          scaleTargetRef: { apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", name: "autoscaled" },
          minReplicas: 3,
          maxReplicas: 3,
        },
      },
      TEST_MANAGER,
    );
    try {
      // It reads the scale (2, the default) and writes 3 through it; nothing else here sets 3.
      await eventually(
        "the HPA scales autoscaled to 3",
        async () => ((await getDpr(client, ns, "autoscaled")).spec as { replicas: number }).replicas === 3,
      );
    } finally {
      // Left behind, it would fail to read metrics every 15 s for the rest of the run.
      await client.deleteExact(
        { apiVersion: "autoscaling/v2", kind: "HorizontalPodAutoscaler", namespace: ns, name: "autoscaled" },
        hpa.metadata.uid!,
      );
    }
  });

  it.each([
    {
      name: "no-image",
      obj: () => ({ ...dprObject(ns, "no-image"), spec: { clusterID: "c" } }),
      message: /spec\.image: Required value/,
    },
    {
      name: "negative",
      obj: () => dprObject(ns, "negative", { replicas: -1 }),
      message: /spec\.replicas: Invalid value: -1: spec\.replicas in body should be greater than or equal to 0/,
    },
    {
      name: "reserved-env",
      obj: () =>
        dprObject(ns, "reserved-env", {
          env: [
            { name: "DYN_DC_ID", value: "x" },
            { name: "OK", value: "1" },
            { name: "POD_UID", value: "y" },
          ],
        }),
      message:
        /spec\.env\[0\]: Invalid value: the product sets DYN_DC_ID itself; remove it from spec\.env, spec\.env\[2\]: Invalid value: the product sets POD_UID itself/,
    },
    {
      name: "with.dot",
      obj: () => dprObject(ns, "with.dot"),
      message: /metadata\.name must be a DNS-1035 label of at most 52 characters/,
    },
    {
      name: "a".repeat(53),
      obj: () => dprObject(ns, "a".repeat(53)),
      message: /metadata\.name must be a DNS-1035 label/,
    },
    {
      name: "1starts-with-digit",
      obj: () => dprObject(ns, "1starts-with-digit"),
      message: /metadata\.name must be a DNS-1035 label/,
    },
  ])("rejects $name at admission", async ({ obj, message }) => {
    const err = await rejection(obj());
    expect(err.status).toBe(422);
    expect(err.message).toMatch(message);
  });

  // The API server's own notes, which name no field of the input: left out of render's answer.
  const NOTES = [
    /^<nil>: Invalid value: null: some validation rules were not checked because the object was invalid/,
    /^\.spec\.replicas: Invalid value: /, // the scale subresource's second look at replicas
    /^<nil>: Invalid value: "": Checked value must be of type integer with format int32/,
  ];
  /** The field messages of an answer: `... is invalid: [a, b]` or `... is invalid: a`. */
  const fieldMessages = (message: string, name: string) => {
    const body = message.slice(message.indexOf(`"${name}" is invalid: `) + `"${name}" is invalid: `.length);
    const list =
      body.startsWith("[") && body.endsWith("]")
        ? body.slice(1, -1).split(/, (?=(?:spec|metadata|<nil>|\.spec)[^ ]*: )/)
        : [body];
    return list.filter((m) => !NOTES.some((n) => n.test(m))).sort();
  };

  it.each([
    { name: "r-required", spec: { clusterID: "c" } },
    { name: "r-several", spec: { clusterID: " c", replicas: -1 } },
    { name: "r-types", spec: { image: "i", clusterID: "c", replicas: "two", priorityClassName: 5 } },
    { name: "r-enum", spec: { image: "i", clusterID: "c", imagePullPolicy: "Sometimes" } },
    { name: "r-empty", spec: { image: "", clusterID: "c", replicas: 3000000000 } },
    { name: "r-long", spec: { image: "x".repeat(1025), clusterID: "c" } },
    { name: "r-pattern", spec: { image: "a b", clusterID: "c" } },
    {
      name: "r-env",
      spec: {
        image: "i",
        clusterID: "c",
        env: [
          { name: "DYN_DC_ID", value: "x" },
          { name: "OK", value: "1" },
          { name: "POD_UID", value: "y" },
        ],
      },
    },
    { name: "r-env-noname", spec: { image: "i", clusterID: "c", env: [{ value: "x" }] } },
    { name: "r.dot", spec: { image: "i", clusterID: "c" } },
    {
      name: "r-selector-values",
      spec: {
        image: "i",
        clusterID: "c",
        dgdSelector: {
          matchExpressions: [
            { key: "pool", operator: "In" },
            { key: "tier", operator: "Exists", values: ["gold"] },
          ],
        },
      },
    },
    // A key and a value refused apart: with both, the API server reports the CEL rule on the map
    // beside the value's pattern, where render, as for any field, reports the schema's alone.
    {
      name: "r-selector-key",
      spec: { image: "i", clusterID: "c", dgdSelector: { matchLabels: { "not a key": "a" } } },
    },
    { name: "r-selector-value", spec: { image: "i", clusterID: "c", dgdSelector: { matchLabels: { pool: "-a" } } } },
    {
      name: "r-selector-many",
      spec: {
        image: "i",
        clusterID: "c",
        dgdSelector: { matchLabels: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, "v"])) },
      },
    },
    {
      name: "r-selector-operator",
      spec: { image: "i", clusterID: "c", dgdSelector: { matchExpressions: [{ key: "pool", operator: "Has" }] } },
    },
  ])("poolrelay render answers $name with the API server's own messages", async ({ name, spec }) => {
    const obj = { apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", metadata: { name, namespace: ns }, spec };
    // Created as `kubectl create` does (a server-side apply of a mistyped field fails with 500, unparsed).
    const server = await client
      .request("POST", `/apis/nvidia.com/v1alpha1/namespaces/${ns}/dynamopoolrelays?dryRun=All`, obj)
      .then(
        () => {
          throw new Error(`${name} was accepted`);
        },
        (err: unknown) => err as ApiError,
      );
    expect(server.status).toBe(422);
    const rendered = spawnSync(process.execPath, ["bin/poolrelay.js", "render", "-f", "-"], {
      cwd: root,
      input: JSON.stringify(obj),
      encoding: "utf8",
    });
    expect(rendered.status).toBe(1);
    const expected = fieldMessages(server.message, name);
    expect(expected.length).toBeGreaterThan(0);
    expect(fieldMessages(rendered.stderr.trim(), name)).toEqual(expected);
  });

  it("accepts a 52-character name, the longest that forms a Service name", async () => {
    await expect(client.apply(dprObject(ns, "a".repeat(52)), TEST_MANAGER)).resolves.toBeTruthy();
  });
});
