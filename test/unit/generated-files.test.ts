import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { CRD_PATH, README_PATH, crdYaml, readmeWithApiReference } from "../../scripts/generated.ts";

describe("generated files", () => {
  it("crds/nvidia.com_dynamopoolrelays.yaml matches the zod schema (run npm run crds)", () => {
    expect(readFileSync(CRD_PATH, "utf8")).toBe(crdYaml());
  });

  it("the README's API reference matches the zod schema (run npm run crds)", () => {
    const readme = readFileSync(README_PATH, "utf8");
    expect(readme).toBe(readmeWithApiReference(readme));
  });

  it("the CRD is structural: every property node has a type or is int-or-string", () => {
    const walk = (node: Record<string, unknown>, path: string): string[] => {
      const own = node["type"] === undefined && !node["x-kubernetes-int-or-string"] ? [path] : [];
      const props = Object.entries((node["properties"] ?? {}) as Record<string, Record<string, unknown>>).flatMap(([k, v]) => walk(v, `${path}.${k}`));
      const items = node["items"] ? walk(node["items"] as Record<string, unknown>, `${path}[]`) : [];
      const extra = typeof node["additionalProperties"] === "object" ? walk(node["additionalProperties"] as Record<string, unknown>, `${path}{}`) : [];
      return [...own, ...props, ...items, ...extra];
    };
    const crd = parse(readFileSync(CRD_PATH, "utf8"));
    expect(walk(crd.spec.versions[0].schema.openAPIV3Schema, "")).toEqual([]);
  });
});
