import { describe, expect, it } from "vitest";
import { dgd, dgdV1alpha1 } from "../test/builders.ts";
import { baseNamespace, workerNamespaces } from "./worker-namespaces.ts";

const HASH = "nvidia.com/current-worker-hash";
const HASH_V2 = "nvidia.com/current-worker-hash-v2";

const cases = [
  { name: "no hash known: the base namespace", input: dgd(), expected: ["team-a-g1"] },
  { name: "dots in the DGD name become dashes", input: dgd({ name: "llama.v2" }), expected: ["team-a-llama-v2"] },
  {
    name: "the v2 hash annotation",
    input: dgd({ annotations: { [HASH_V2]: "abcd1234" } }),
    expected: ["team-a-g1-abcd1234"],
  },
  {
    name: "both hash annotations",
    input: dgd({ annotations: { [HASH_V2]: "abcd1234", [HASH]: "legacy" } }),
    expected: ["team-a-g1-abcd1234", "team-a-g1-legacy"],
  },
  {
    name: "old and new generations from status during a rollout",
    input: dgd({
      annotations: { [HASH_V2]: "bbbb2222" },
      componentNames: { decode: ["g1-decode-aaaa1111", "g1-decode-bbbb2222"] },
    }),
    expected: ["team-a-g1-aaaa1111", "team-a-g1-bbbb2222"],
  },
  {
    name: "status workload names are matched case-insensitively by component",
    input: dgd({
      components: [{ name: "VllmDecodeWorker", type: "decode" }],
      componentNames: { VllmDecodeWorker: ["g1-vllmdecodeworker-cafe0001"] },
    }),
    expected: ["team-a-g1-cafe0001"],
  },
  {
    name: "a workload name without hash counts as the base",
    input: dgd({ componentNames: { decode: ["g1-decode"] } }),
    expected: ["team-a-g1"],
  },
  {
    name: "a workload name without hash next to one with a hash: both generations",
    input: dgd({ componentNames: { decode: ["g1-decode", "g1-decode-aaaa1111"] } }),
    expected: ["team-a-g1", "team-a-g1-aaaa1111"],
  },
  {
    name: "a workload name that only begins with the component's name is not taken as a hash",
    input: dgd({ componentNames: { decode: ["g1-decodes1", "g1-decode-aaaa1111"] } }),
    expected: ["team-a-g1-aaaa1111"],
  },
  {
    name: "generations sorted byte-wise whatever the order the status shows them in",
    input: dgd({
      components: [
        { name: "decode", type: "decode" },
        { name: "w", type: "worker", global: true },
      ],
      componentNames: { decode: ["g1-decode-bbbb2222", "g1-decode-aaaa1111"] },
    }),
    expected: ["dynamo", "team-a-g1-aaaa1111", "team-a-g1-bbbb2222"],
  },
  {
    name: "a DGD without a Kubernetes namespace: an empty first part",
    input: { ...dgd(), metadata: { name: "g1" } },
    expected: ["-g1"],
  },
  {
    name: "another component's longer name is not taken as a hash",
    input: dgd({
      components: [
        { name: "decode", type: "decode" },
        { name: "decode-big", type: "frontend" },
      ],
      componentNames: { decode: ["g1-decode-big-aaaa1111"] },
      annotations: { [HASH_V2]: "cccc3333" },
    }),
    expected: ["team-a-g1-cccc3333"],
  },
  {
    name: "prefill and decode with the same hash, de-duplicated",
    input: dgd({
      components: [
        { name: "prefill", type: "prefill" },
        { name: "decode", type: "decode" },
      ],
      annotations: { [HASH_V2]: "abcd1234" },
    }),
    expected: ["team-a-g1-abcd1234"],
  },
  {
    name: "a worker without componentNames under the hash another worker's componentNames show (a new prefill mid-rollout), not the base",
    input: dgd({
      components: [
        { name: "fe", type: "frontend" },
        { name: "prefill", type: "prefill" },
        { name: "decode", type: "decode" },
      ],
      componentNames: { fe: ["g1-fe"], decode: ["g1-decode-aaaa1111"] },
    }),
    expected: ["team-a-g1-aaaa1111"],
  },
  {
    name: "the annotated hash as well, when every worker's componentNames still show only the old generation",
    input: dgd({
      components: [
        { name: "prefill", type: "prefill" },
        { name: "decode", type: "decode" },
      ],
      annotations: { [HASH_V2]: "bbbb2222" },
      componentNames: { prefill: ["g1-prefill-aaaa1111"], decode: ["g1-decode-aaaa1111"] },
    }),
    expected: ["team-a-g1-aaaa1111", "team-a-g1-bbbb2222"],
  },
  {
    name: "both annotations and the componentNames of every worker, which differ between workers",
    input: dgd({
      components: [
        { name: "prefill", type: "prefill" },
        { name: "decode", type: "decode" },
      ],
      annotations: { [HASH_V2]: "bbbb2222", [HASH]: "legacy" },
      componentNames: { prefill: ["g1-prefill-aaaa1111"], decode: ["g1-decode-aaaa1111", "g1-decode-bbbb2222"] },
    }),
    expected: ["team-a-g1-aaaa1111", "team-a-g1-bbbb2222", "team-a-g1-legacy"],
  },
  {
    name: "a hash from a global-namespace worker's componentNames for the workers in the base",
    input: dgd({
      components: [
        { name: "w", type: "worker", global: true },
        { name: "decode", type: "decode" },
      ],
      componentNames: { w: ["g1-w-aaaa1111"] },
    }),
    expected: ["dynamo", "team-a-g1-aaaa1111"],
  },
  {
    name: "frontends and planners are not workers",
    input: dgd({
      components: [
        { name: "fe", type: "frontend" },
        { name: "p", type: "planner" },
      ],
    }),
    expected: [],
  },
  {
    name: "a global-namespace worker",
    input: dgd({
      components: [
        { name: "w", type: "worker", global: true },
        { name: "d", type: "decode" },
      ],
    }),
    expected: ["dynamo", "team-a-g1"],
  },
  {
    name: "the v1alpha1 shape mid-rollout",
    input: dgdV1alpha1({
      components: [{ name: "decode", type: "worker" }],
      componentNames: { decode: ["g1-decode-a1b2c3d4", "g1-decode-e5f6a7b8"] },
    }),
    expected: ["team-a-g1-a1b2c3d4", "team-a-g1-e5f6a7b8"],
  },
];

describe("workerNamespaces", () => {
  it.each(cases)("lists $name", ({ input, expected }) => {
    expect(workerNamespaces(input)).toEqual(expected);
  });
});

describe("baseNamespace", () => {
  it("joins the Kubernetes namespace and the DGD name", () => {
    expect(baseNamespace("ns", "a.b.c")).toBe("ns-a-b-c");
  });
});
