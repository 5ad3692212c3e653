// toOpenApi on small hand-written zod schemas: each expected schema is written out as Kubernetes
// wants a CRD's structural schema (no additionalProperties: false, x-kubernetes-preserve-unknown-fields
// for objects that keep unknown fields, int-or-string as anyOf integer/string, no JSON-number bounds).
import { describe, expect, it } from "vitest";
import * as z from "../zod.ts";
import { toOpenApi } from "./openapi.ts";

const cases = [
  { name: "a string, with no $schema", schema: z.string(), expected: { type: "string" } },
  {
    name: "a strict object without additionalProperties: false, which a structural schema forbids",
    schema: z.strictObject({ a: z.string() }),
    expected: { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
  },
  {
    name: "an object that keeps unknown fields as x-kubernetes-preserve-unknown-fields",
    schema: z.looseObject({ a: z.optional(z.string()) }).check(z.meta({ description: "Passed through." })),
    expected: {
      type: "object",
      description: "Passed through.",
      properties: { a: { type: "string" } },
      "x-kubernetes-preserve-unknown-fields": true,
    },
  },
  {
    name: "a map of strings as additionalProperties with the value's schema",
    schema: z.record(z.string(), z.string()),
    expected: { type: "object", additionalProperties: { type: "string" } },
  },
  {
    name: "a map of anything as x-kubernetes-preserve-unknown-fields",
    schema: z.record(z.string(), z.unknown()),
    expected: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
  },
  {
    name: "an int-or-string as anyOf integer, string, whatever the union's own members",
    schema: z
      .union([z.number(), z.string()])
      .check(z.meta({ description: "A quantity.", "x-kubernetes-int-or-string": true })),
    expected: {
      description: "A quantity.",
      "x-kubernetes-int-or-string": true,
      anyOf: [{ type: "integer" }, { type: "string" }],
    },
  },
  { name: "an integer without the bounds of a safe JSON number", schema: z.int(), expected: { type: "integer" } },
  {
    name: "an integer with its own lower bound and no upper one",
    schema: z.int().check(z.minimum(-5)),
    expected: { type: "integer", minimum: -5 },
  },
  {
    name: "an integer with its own upper bound and no lower one",
    schema: z.int().check(z.maximum(10)),
    expected: { type: "integer", maximum: 10 },
  },
  {
    name: "an integer with both its own bounds",
    schema: z.int().check(z.minimum(0), z.maximum(10)),
    expected: { type: "integer", minimum: 0, maximum: 10 },
  },
  {
    name: "a nullable field defaulting to null",
    schema: z._default(z.nullable(z.string()), null),
    expected: { type: "string", nullable: true, default: null },
  },
  {
    name: "the same rewrites inside arrays and nested objects, with arrays kept in order",
    schema: z.strictObject({ list: z.array(z.looseObject({})), n: z.optional(z.int()), e: z.enum(["B", "A"]) }),
    expected: {
      type: "object",
      properties: {
        list: {
          type: "array",
          items: { type: "object", properties: {}, "x-kubernetes-preserve-unknown-fields": true },
        },
        n: { type: "integer" },
        e: { type: "string", enum: ["B", "A"] },
      },
      required: ["list", "e"],
    },
  },
];

describe("toOpenApi", () => {
  it.each(cases)("writes $name", ({ schema, expected }) => {
    expect(toOpenApi(schema)).toEqual(expected);
  });
});
