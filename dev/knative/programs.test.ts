import { describe, expect, it } from "vitest";
import { knativeProgram, localPath, programFor, type ProductImage } from "./programs.ts";

const product: ProductImage = {
  name: "dynamo-pool-relay",
  program: { name: "functions-framework", command: ["node", "ff.js"], portEnv: {}, fixedPorts: [], go: false, paths: { "/app/functions/": "/repo/dist/functions/" } },
};

describe("knativeProgram", () => {
  it.each([
    { image: "ko://knative.dev/eventing/cmd/broker/ingress", binary: "ingress", portEnv: { 8080: "INGRESS_PORT", 8443: "INGRESS_PORT_HTTPS" }, fixed: [] },
    { image: "ko://knative.dev/eventing/cmd/broker/filter", binary: "filter", portEnv: { 8080: "FILTER_PORT", 8443: "FILTER_PORT_HTTPS" }, fixed: [] },
    { image: "ko://knative.dev/eventing/cmd/in_memory/channel_dispatcher", binary: "channel_dispatcher", portEnv: {}, fixed: [8080, 8443] },
    { image: "gcr.io/knative-releases/knative.dev/eventing/cmd/apiserver_receive_adapter", binary: "apiserver_receive_adapter", portEnv: {}, fixed: [] },
    { image: "gcr.io/knative-releases/knative.dev/eventing/cmd/mtping:v1.23.0", binary: "mtping", portEnv: {}, fixed: [] },
    { image: `registry.local:5000/knative.dev/eventing/cmd/mtping@sha256:${"a".repeat(64)}`, binary: "mtping", portEnv: {}, fixed: [] },
  ])("runs $image as the local $binary", ({ image, binary, portEnv, fixed }) => {
    expect(knativeProgram(image, "/bin")).toEqual({ name: binary, command: [`/bin/${binary}`], portEnv, fixedPorts: fixed, go: true, paths: {} });
  });

  it.each([
    "ko://knative.dev/eventing/cmd/controller", // the reconcilers run as one host process, not from their Deployment
    "ko://knative.dev/eventing/cmd/webhook",
    "gcr.io/knative-releases/knative.dev/serving/cmd/queue",
    "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.2.0",
    "knative.dev/eventing/cmd/mtping", // no registry or ko:// prefix: not an image of a built command
  ])("runs nothing for %s", (image) => {
    expect(knativeProgram(image, "/bin")).toBeUndefined();
  });
});

describe("programFor", () => {
  it.each(["dynamo-pool-relay", "dynamo-pool-relay:0.1.0", `dynamo-pool-relay@sha256:${"b".repeat(64)}`])("maps the product image %s to its program, whatever the tag", (image) => {
    expect(programFor(image, "/bin", [product])?.name).toBe("functions-framework");
  });

  it("prefers nothing over a guess: another image with the product's name as a suffix runs nothing", () => {
    expect(programFor("example.com/dynamo-pool-relay:0.1.0", "/bin", [product])).toBeUndefined();
  });
});

describe("localPath", () => {
  it.each([
    { value: "/app/functions/apply/index.mjs", expected: "/repo/dist/functions/apply/index.mjs" },
    { value: "/app/other", expected: "/app/other" },
    { value: "production", expected: "production" },
  ])("$value -> $expected", ({ value, expected }) => {
    expect(localPath(value, product.program.paths)).toBe(expected);
  });

  it("takes the longest matching prefix", () => {
    expect(localPath("/app/functions/x", { "/app/": "/a/", "/app/functions/": "/f/" })).toBe("/f/x");
  });
});
