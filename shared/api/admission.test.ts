// The API server's answer to a DynamoPoolRelay it refuses, as `poolrelay render` reports it. The
// expected strings are kube-apiserver's wording (its OpenAPI schema validator and CEL rules), as
// test/integration/crd.test.ts checks against a real one; a few generic zod schemas cover the
// validator's messages the DynamoPoolRelay schema has no field for.
import { describe, expect, it } from "vitest";
import * as z from "../zod.ts";
import { admissionMessage } from "./admission.ts";
import { DynamoPoolRelay } from "./dynamo-pool-relay.ts";

function answer(schema: z.ZodMiniType, input: unknown, name: string): string {
  const r = schema.safeParse(input, { reportInput: true });
  if (r.success) throw new Error(`${JSON.stringify(input)} was accepted`);
  return admissionMessage(r.error, name);
}
const dpr = (spec: unknown, name = "g1") =>
  answer(
    DynamoPoolRelay,
    { apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", metadata: { name, namespace: "team-a" }, spec },
    name,
  );

const ENV_MESSAGE = (name: string) => `Invalid value: the product sets ${name} itself; remove it from spec.env`;
const NAME_MESSAGE =
  "<nil>: Invalid value: metadata.name must be a DNS-1035 label of at most 52 characters (lower-case letters, digits and '-', starting with a letter, no dots) so that the Service <name>-pool-relay can exist";

describe("admissionMessage for a DynamoPoolRelay", () => {
  it.each([
    { name: "a missing image", spec: { clusterID: "c" }, expected: "spec.image: Required value" },
    { name: "a missing spec", spec: undefined, expected: "spec: Required value" },
    {
      name: "a missing env name",
      spec: { image: "i", clusterID: "c", env: [{ value: "x" }] },
      expected: "spec.env[0].name: Required value",
    },
    {
      name: "an empty image",
      spec: { image: "", clusterID: "c" },
      expected: 'spec.image: Invalid value: "": spec.image in body should be at least 1 chars long',
    },
    {
      name: "an image over 1024 bytes",
      spec: { image: "x".repeat(1025), clusterID: "c" },
      expected: "spec.image: Too long: may not be more than 1024 bytes",
    },
    {
      name: "an image with a space",
      spec: { image: "a b", clusterID: "c" },
      expected: "spec.image: Invalid value: \"a b\": spec.image in body should match '^\\S+$'",
    },
    {
      name: "negative replicas",
      spec: { image: "i", clusterID: "c", replicas: -1 },
      expected: "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0",
    },
    {
      name: "replicas over int32",
      spec: { image: "i", clusterID: "c", replicas: 3000000000 },
      expected:
        "spec.replicas: Invalid value: 3000000000: spec.replicas in body should be less than or equal to 2147483647",
    },
    {
      name: "fractional replicas",
      spec: { image: "i", clusterID: "c", replicas: 1.5 },
      expected: 'spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number"',
    },
    {
      name: "replicas as a string",
      spec: { image: "i", clusterID: "c", replicas: "two" },
      expected: 'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
    },
    {
      name: "a boolean image",
      spec: { image: true, clusterID: "c" },
      expected: 'spec.image: Invalid value: "boolean": spec.image in body must be of type string: "boolean"',
    },
    {
      name: "a null nodeSelector",
      spec: { image: "i", clusterID: "c", nodeSelector: null },
      expected: 'spec.nodeSelector: Invalid value: "null": spec.nodeSelector in body must be of type object: "null"',
    },
    {
      name: "a list as resources",
      spec: { image: "i", clusterID: "c", resources: [] },
      expected: 'spec.resources: Invalid value: "array": spec.resources in body must be of type object: "array"',
    },
    {
      name: "an object as tolerations",
      spec: { image: "i", clusterID: "c", tolerations: {} },
      expected: 'spec.tolerations: Invalid value: "object": spec.tolerations in body must be of type array: "object"',
    },
    {
      name: "a bad pull policy",
      spec: { image: "i", clusterID: "c", imagePullPolicy: "Sometimes" },
      expected:
        'spec.imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
    },
    {
      name: "129 env entries",
      spec: { image: "i", clusterID: "c", env: Array.from({ length: 129 }, (_, i) => ({ name: `E${i}` })) },
      expected: "spec.env: Too many: 129: must have at most 128 items",
    },
  ])("answers $name with the API server's one message", ({ spec, expected }) => {
    expect(dpr(spec)).toBe(`DynamoPoolRelay.nvidia.com "g1" is invalid: ${expected}`);
  });

  it("lists several problems in brackets, in the schema's field order", () => {
    expect(dpr({ clusterID: " c", replicas: -1 })).toBe(
      'DynamoPoolRelay.nvidia.com "g1" is invalid: [spec.image: Required value, ' +
        "spec.clusterID: Invalid value: \" c\": spec.clusterID in body should match '^\\S(.*\\S)?$', " +
        "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0]",
    );
  });

  it("reports each reserved env entry by its own CEL rule's message", () => {
    expect(
      dpr({
        image: "i",
        clusterID: "c",
        env: [
          { name: "DYN_DC_ID", value: "x" },
          { name: "OK", value: "1" },
          { name: "POD_UID", value: "y" },
        ],
      }),
    ).toBe(
      `DynamoPoolRelay.nvidia.com "g1" is invalid: [spec.env[0]: ${ENV_MESSAGE("DYN_DC_ID")}, spec.env[2]: ${ENV_MESSAGE("POD_UID")}]`,
    );
  });

  it("reports the name rule at the root, where the CRD states it", () => {
    expect(dpr({ image: "i", clusterID: "c" }, "r.dot")).toBe(
      `DynamoPoolRelay.nvidia.com "r.dot" is invalid: ${NAME_MESSAGE}`,
    );
  });

  it("reports CEL rules only once the object passed the schema, as the API server does", () => {
    expect(dpr({ image: "", clusterID: "c", env: [{ name: "DYN_DC_ID" }] }, "r.dot")).toBe(
      'DynamoPoolRelay.nvidia.com "r.dot" is invalid: spec.image: Invalid value: "": spec.image in body should be at least 1 chars long',
    );
  });

  it("reports a string's first failure only, in the API server's order: length over the limit, then under it, then pattern", () => {
    expect(dpr({ image: "a b".repeat(400), clusterID: "" })).toBe(
      'DynamoPoolRelay.nvidia.com "g1" is invalid: [spec.image: Too long: may not be more than 1024 bytes, spec.clusterID: Invalid value: "": spec.clusterID in body should be at least 1 chars long]',
    );
  });
});

describe("admissionMessage for other schema failures", () => {
  it.each([
    {
      name: "a pattern checked before the length in the schema",
      schema: z.string().check(z.regex(/^a/), z.maxLength(2)),
      input: "bbb",
      expected: "<nil>: Too long: may not be more than 2 bytes",
    },
    {
      name: "a pattern checked before the minimum length",
      schema: z.string().check(z.regex(/^a/), z.minLength(2)),
      input: "b",
      expected: '<nil>: Invalid value: "b": <nil> in body should be at least 2 chars long',
    },
    {
      name: "a pattern with flags, by its source alone as the CRD states it",
      schema: z.string().check(z.regex(/^[a-z]+$/i)),
      input: "1",
      expected: "<nil>: Invalid value: \"1\": <nil> in body should match '^[a-z]+$'",
    },
    {
      name: "two failing patterns, by the first",
      schema: z.string().check(z.regex(/^a/), z.regex(/b$/)),
      input: "x",
      expected: "<nil>: Invalid value: \"x\": <nil> in body should match '^a'",
    },
    {
      name: "every failure of a number, which the string order does not apply to",
      schema: z.number().check(z.maximum(3), z.multipleOf(2)),
      input: 5,
      expected:
        "[<nil>: Invalid value: 5: <nil> in body should be less than or equal to 3, <nil>: Invalid value: Invalid number: must be a multiple of 2]",
    },
    {
      name: "a refinement that is no CEL rule along with the schema's other failures",
      schema: z.object({ a: z.string(), b: z.string().check(z.refine((v) => v === "b", "b must be b")) }),
      input: { a: 1, b: "x" },
      expected:
        '[a: Invalid value: "integer": a in body must be of type string: "integer", b: Invalid value: b must be b]',
    },
    {
      name: "too few items",
      schema: z.object({ l: z.array(z.string()).check(z.minLength(2)) }),
      input: { l: ["a"] },
      expected: "l: Invalid value: 1: l in body should have at least 2 items",
    },
    {
      name: "a string format other than a pattern",
      schema: z.email(),
      input: "nope",
      expected: '<nil>: Invalid value: "nope": Invalid email address',
    },
    {
      name: "any other failure",
      schema: z.strictObject({ a: z.string() }),
      input: { a: "x", b: 1 },
      expected: '<nil>: Invalid value: Unrecognized key: "b"',
    },
    {
      name: "a number over the maximum",
      schema: z.number().check(z.maximum(3)),
      input: 4,
      expected: "<nil>: Invalid value: 4: <nil> in body should be less than or equal to 3",
    },
    {
      name: "a number under the minimum",
      schema: z.number().check(z.minimum(3)),
      input: 2.5,
      expected: "<nil>: Invalid value: 2.5: <nil> in body should be greater than or equal to 3",
    },
    {
      name: "a non-integer number for a string",
      schema: z.string(),
      input: 1.5,
      expected: '<nil>: Invalid value: "number": <nil> in body must be of type string: "number"',
    },
    {
      name: "an integer for a boolean",
      schema: z.boolean(),
      input: 2,
      expected: '<nil>: Invalid value: "integer": <nil> in body must be of type boolean: "integer"',
    },
  ])("answers $name", ({ schema, input, expected }) => {
    expect(answer(schema, input, "x")).toBe(`DynamoPoolRelay.nvidia.com "x" is invalid: ${expected}`);
  });

  it("keeps each field's own first string failure and every other failure, in order", () => {
    const schema = z.object({
      a: z.string().check(z.regex(/^a/), z.maxLength(2)),
      b: z.int(),
      c: z.string().check(z.minLength(2), z.regex(/^c/)),
    });
    expect(answer(schema, { a: "bbb", b: "1", c: "x" }, "x")).toBe(
      'DynamoPoolRelay.nvidia.com "x" is invalid: [a: Too long: may not be more than 2 bytes, b: Invalid value: "string": b in body must be of type integer: "string", c: Invalid value: "x": c in body should be at least 2 chars long]',
    );
  });
});
