import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { readObjects } from "../../dev/yaml.ts";
import { CRD_PATH, API_DOC_PATH, crdYaml, withApiReference } from "../../scripts/generated.ts";

type Node = Record<string, unknown>;

/** What these tests read of the generated CRD. */
interface CrdFile {
  metadata: { labels: Record<string, string> };
  spec: {
    versions: {
      schema: { openAPIV3Schema: Node };
      subresources: { scale: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath: string } };
      additionalPrinterColumns: { name: string; type: string; jsonPath: string }[];
    }[];
  };
}

const crd = parse(readFileSync(CRD_PATH, "utf8")) as CrdFile;
const version = crd.spec.versions[0]!;
const root: Node = version.schema.openAPIV3Schema;

/** Every schema node a field path reaches (properties, list items, map values), with that path. */
function nodes(node: Node, path: string): [string, Node][] {
  const props = Object.entries((node["properties"] ?? {}) as Record<string, Node>).flatMap(([k, v]) =>
    nodes(v, `${path}.${k}`),
  );
  const items = node["items"] ? nodes(node["items"] as Node, `${path}[]`) : [];
  const extra =
    typeof node["additionalProperties"] === "object" ? nodes(node["additionalProperties"] as Node, `${path}{}`) : [];
  return [[path, node], ...props, ...items, ...extra];
}

/** The schema of a field named by a simple JSONPath such as `.spec.replicas`. */
function field(jsonPath: string): Node | undefined {
  return jsonPath
    .split(".")
    .slice(1)
    .reduce<Node | undefined>((node, key) => (node?.["properties"] as Record<string, Node> | undefined)?.[key], root);
}

describe("generated files", () => {
  it("crds/nvidia.com_dynamopoolrelays.yaml matches the zod schema (run npm run crds)", () => {
    expect(readFileSync(CRD_PATH, "utf8")).toBe(crdYaml());
  });

  it("docs/api.md matches the zod schema (run npm run crds)", () => {
    const doc = readFileSync(API_DOC_PATH, "utf8");
    expect(doc).toBe(withApiReference(doc));
  });

  it("the CRD is structural: every property node has a type or is int-or-string", () => {
    const untyped = nodes(root, "").filter(([, n]) => n["type"] === undefined && !n["x-kubernetes-int-or-string"]);
    expect(untyped.map(([path]) => path)).toEqual([]);
  });

  it("every schema node has a description, so kubectl explain shows one for every field, list item and map value", () => {
    // Top-level metadata is the one exception: the API server refuses anything but its type there.
    expect((root["properties"] as Record<string, unknown>)["metadata"]).toEqual({ type: "object" });
    const undescribed = nodes(root, "").filter(
      ([path, n]) => path !== ".metadata" && (typeof n["description"] !== "string" || n["description"].trim() === ""),
    );
    expect(undescribed.map(([path]) => path || "(root)")).toEqual([]);
  });

  it("the scale subresource names fields the schema has, and spec.replicas always exists (it defaults)", () => {
    const scale = version.subresources.scale;
    expect(scale).toEqual({
      specReplicasPath: ".spec.replicas",
      statusReplicasPath: ".status.replicas",
      labelSelectorPath: ".status.labelSelector",
    });
    // Without a value at specReplicasPath the API server answers GET .../scale with an error.
    expect(field(scale.specReplicasPath)).toMatchObject({ type: "integer", default: 2 });
    expect(root["required"]).toContain("spec");
    expect(field(scale.statusReplicasPath)).toMatchObject({ type: "integer" });
    expect(field(scale.labelSelectorPath)).toMatchObject({ type: "string" });
  });

  it("every printer column reads a field of the schema, of the column's type", () => {
    const simple = version.additionalPrinterColumns.filter((c) => /^(\.\w+)+$/.test(c.jsonPath));
    expect(simple.map((c) => c.name)).toEqual([
      "Replicas",
      "Endpoint",
      "Generation",
      "Observed",
      "Namespace",
      "Selected",
      "Eligible",
      "Age",
    ]);
    const ofSchema = simple.filter((c) => !c.jsonPath.startsWith(".metadata."));
    expect(ofSchema.map((c) => c.name)).toEqual(["Replicas", "Endpoint", "Observed", "Selected", "Eligible"]);
    for (const c of ofSchema) expect(field(c.jsonPath), c.name).toMatchObject({ type: c.type });
    // ObjectMeta's fields, which the schema does not describe: of the types Kubernetes gives them.
    const ofMeta = simple.filter((c) => c.jsonPath.startsWith(".metadata."));
    expect(Object.fromEntries(ofMeta.map((c) => [c.jsonPath, c.type]))).toEqual({
      ".metadata.generation": "integer",
      ".metadata.namespace": "string",
      ".metadata.creationTimestamp": "date",
    });
    expect(simple.find((c) => c.name === "Replicas")?.jsonPath).toBe(".status.readyOfDesired");
  });

  it("the CRD is labelled part-of the product, like every object of knative/ that carries the label", () => {
    const dir = fileURLToPath(new URL("../../knative/", import.meta.url));
    const partOf = readdirSync(dir)
      .filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml" && f !== "kustomizeconfig.yaml")
      .flatMap((f) => readObjects(`${dir}${f}`))
      .map((o) => (o.metadata["labels"] as Record<string, string> | undefined)?.["app.kubernetes.io/part-of"])
      .filter((v): v is string => v !== undefined);
    expect(partOf.length).toBeGreaterThan(10);
    expect(new Set([...partOf, crd.metadata.labels["app.kubernetes.io/part-of"]])).toEqual(
      new Set(["dynamo-pool-relay"]),
    );
  });
});
