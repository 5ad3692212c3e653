import { describe, expect, it } from "vitest";
import { components, isWorker, type Component, type DynamoGraphDeployment } from "./dynamo-graph-deployment.ts";

const meta = { name: "g1", namespace: "team-a" };
const beta = (spec: DynamoGraphDeployment["spec"]): DynamoGraphDeployment => ({
  apiVersion: "nvidia.com/v1beta1",
  kind: "DynamoGraphDeployment",
  metadata: meta,
  spec,
});
const alpha = (spec: DynamoGraphDeployment["spec"]): DynamoGraphDeployment => ({
  apiVersion: "nvidia.com/v1alpha1",
  kind: "DynamoGraphDeployment",
  metadata: meta,
  spec,
});

const cases: { name: string; input: DynamoGraphDeployment; expected: Component[] }[] = [
  { name: "no spec: no components", input: { ...beta(undefined), spec: undefined }, expected: [] },
  {
    name: "v1beta1 components in the order listed, with the pod template's annotations",
    input: beta({
      components: [
        { name: "fe", type: "frontend" },
        {
          name: "decode",
          type: "decode",
          globalDynamoNamespace: true,
          podTemplate: { metadata: { annotations: { a: "1" } } },
        },
        { name: "w", globalDynamoNamespace: false, podTemplate: {} },
      ],
    }),
    expected: [
      { name: "fe", type: "frontend", globalDynamoNamespace: false, annotations: {} },
      { name: "decode", type: "decode", globalDynamoNamespace: true, annotations: { a: "1" } },
      { name: "w", type: undefined, globalDynamoNamespace: false, annotations: {} },
    ],
  },
  {
    name: "v1alpha1 services sorted by name (a map has no order), with their own annotations",
    input: alpha({
      services: {
        prefill: { componentType: "prefill", annotations: { b: "2" } },
        Frontend: { componentType: "frontend" },
        decode: { componentType: "worker", globalDynamoNamespace: true },
        aux: null,
      },
    }),
    expected: [
      { name: "Frontend", type: "frontend", globalDynamoNamespace: false, annotations: {} },
      { name: "aux", type: undefined, globalDynamoNamespace: false, annotations: {} },
      { name: "decode", type: "worker", globalDynamoNamespace: true, annotations: {} },
      { name: "prefill", type: "prefill", globalDynamoNamespace: false, annotations: { b: "2" } },
    ],
  },
  {
    name: "both shapes at once: the list, then the map",
    input: beta({ components: [{ name: "z", type: "worker" }], services: { a: { componentType: "decode" } } }),
    expected: [
      { name: "z", type: "worker", globalDynamoNamespace: false, annotations: {} },
      { name: "a", type: "decode", globalDynamoNamespace: false, annotations: {} },
    ],
  },
];

describe("components", () => {
  it.each(cases)("reads $name", ({ input, expected }) => {
    expect(components(input)).toEqual(expected);
  });
});

describe("isWorker", () => {
  it.each([
    { type: "worker", expected: true },
    { type: "prefill", expected: true },
    { type: "decode", expected: true },
    { type: "frontend", expected: false },
    { type: "Worker", expected: false },
    { type: undefined, expected: false },
  ])("counts a component of type $type as a worker: $expected", ({ type, expected }) => {
    expect(isWorker({ name: "c", type, globalDynamoNamespace: false, annotations: {} })).toBe(expected);
  });
});
