// The API reference tables of docs/api.md, generated for small hand-written zod schemas. Each expected
// line is written out as docs/api.md shows a field: path, type, notes, description.
import { describe, expect, it } from "vitest";
import * as z from "../zod.ts";
import { referenceTable } from "./docs.ts";

const HEADER = ["| Field | Type | | Description |", "|---|---|---|---|"];

describe("referenceTable", () => {
  it("writes a heading, the description and a row per field: type, required, default and description", () => {
    const schema = z
      .object({
        image: z.string().check(z.meta({ description: "The image." })),
        replicas: z._default(z.int(), 2).check(z.meta({ description: "How many." })),
        mode: z.optional(z.enum(["A", "B"])),
        note: z.optional(z.string().check(z.meta({ description: "Either a | b." }))),
        both: z.string().check(z.meta({ description: "Required, and defaulted by the API server.", default: "x" })),
      })
      .check(z.meta({ description: "What the user wants." }));
    expect(referenceTable("spec", schema)).toEqual([
      "#### spec",
      "",
      "What the user wants.",
      "",
      ...HEADER,
      "| `spec.image` | string | required | The image. |",
      "| `spec.replicas` | integer | default 2 | How many. |",
      "| `spec.mode` | A \\| B |  |  |",
      "| `spec.note` | string |  | Either a \\| b. |",
      '| `spec.both` | string | required, default "x" | Required, and defaulted by the API server. |',
      "",
    ]);
  });

  it("names lists, maps, int-or-strings and untyped fields as docs/api.md does", () => {
    const schema = z.object({
      tags: z.optional(z.array(z.string())),
      matrix: z.optional(z.array(z.array(z.int()))),
      labels: z.optional(z.record(z.string(), z.string())),
      quantities: z.optional(
        z.record(z.string(), z.union([z.int(), z.string()]).check(z.meta({ "x-kubernetes-int-or-string": true }))),
      ),
      size: z.optional(z.union([z.int(), z.string()]).check(z.meta({ "x-kubernetes-int-or-string": true }))),
      anything: z.optional(z.unknown()),
    });
    expect(referenceTable("status", schema)).toEqual([
      "#### status",
      "",
      "",
      "",
      ...HEADER,
      "| `status.tags` | []string |  |  |",
      "| `status.matrix` | [][]integer |  |  |",
      "| `status.labels` | map[string]string |  |  |",
      "| `status.quantities` | map[string]int or string |  |  |",
      "| `status.size` | int or string |  |  |",
      "| `status.anything` | object |  |  |",
      "",
    ]);
  });

  it("lists the fields of a nested object under its dotted path, but not those of an object that keeps unknown fields", () => {
    const schema = z.object({
      resources: z
        .object({ limits: z.object({ cpu: z.string().check(z.meta({ description: "CPU." })) }) })
        .check(z.meta({ description: "Resources." })),
      affinity: z
        .optional(z.looseObject({ nodeAffinity: z.optional(z.string()) }))
        .check(z.meta({ description: "Passed through." })),
    });
    expect(referenceTable("spec", schema).slice(6)).toEqual([
      "| `spec.resources` | object | required | Resources. |",
      "| `spec.resources.limits` | object | required |  |",
      "| `spec.resources.limits.cpu` | string | required | CPU. |",
      "| `spec.affinity` | object |  | Passed through. |",
      "",
    ]);
  });
});
