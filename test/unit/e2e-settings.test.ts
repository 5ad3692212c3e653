// What npm run test:e2e takes from its environment, and the image it installs.
import { describe, expect, it } from "vitest";
import { withImages } from "../../dev/product.ts";
import { e2eSettings } from "../e2e/settings.ts";

const ENV = {
  KUBECONFIG: "/tmp/kc",
  POOLRELAY_IMAGE: "reg.example/dynamo-pool-relay:1",
  POOLRELAY_RELAY_IMAGE: "reg.example/relay:1",
};

describe("the e2e suite's settings", () => {
  it("takes the cluster, the two images and kubectl (from PATH unless KUBECTL names one)", () => {
    expect(e2eSettings(ENV)).toEqual({
      kubeconfig: "/tmp/kc",
      kubectl: "kubectl",
      image: ENV.POOLRELAY_IMAGE,
      relayImage: ENV.POOLRELAY_RELAY_IMAGE,
    });
    expect(e2eSettings({ ...ENV, KUBECTL: "/opt/kubectl" }).kubectl).toBe("/opt/kubectl");
  });

  it("names every variable missing, before it touches a cluster", () => {
    expect(() => e2eSettings({ KUBECONFIG: "/tmp/kc" })).toThrow(
      /^npm run test:e2e needs POOLRELAY_IMAGE, POOLRELAY_RELAY_IMAGE: /,
    );
    expect(() => e2eSettings({})).toThrow(/needs KUBECONFIG, POOLRELAY_IMAGE, POOLRELAY_RELAY_IMAGE/);
  });

  it("takes the build to upgrade from as a pair: its knative/ folder and its image", () => {
    const from = { POOLRELAY_UPGRADE_FROM: "/tmp/v1/knative", POOLRELAY_UPGRADE_FROM_IMAGE: "reg.example/p:0.9" };
    expect(e2eSettings({ ...ENV, ...from }).upgradeFrom).toEqual({
      knative: "/tmp/v1/knative",
      image: "reg.example/p:0.9",
    });
    expect(e2eSettings(ENV).upgradeFrom).toBeUndefined();
    expect(() => e2eSettings({ ...ENV, POOLRELAY_UPGRADE_FROM: "/tmp/v1/knative" })).toThrow(/go together/);
    expect(() => e2eSettings({ ...ENV, POOLRELAY_UPGRADE_FROM_IMAGE: "reg.example/p:0.9" })).toThrow(/go together/);
  });

  it("refuses a KUBECONFIG list: it installs on exactly one cluster", () => {
    expect(() => e2eSettings({ ...ENV, KUBECONFIG: "/a:/b" })).toThrow(/one file/);
  });

  it("puts the image in place of the name knative/ gives it, tagged or not, and nowhere else", () => {
    const objects = [
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "a" },
        spec: { containers: [{ image: "dynamo-pool-relay:0.1.0" }, { image: "dynamo-pool-relay" }] },
      },
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "b" },
        spec: { containers: [{ image: "other/dynamo-pool-relay:1" }] },
      },
    ];
    expect(JSON.stringify(withImages(objects, { "dynamo-pool-relay": "reg.example/p:2" }))).toBe(
      JSON.stringify([
        { ...objects[0], spec: { containers: [{ image: "reg.example/p:2" }, { image: "reg.example/p:2" }] } },
        objects[1],
      ]),
    );
  });

  it("refuses, when strict, an image it is not given (as the local node, which runs only what it built)", () => {
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "a" },
      spec: { containers: [{ image: "other:1" }] },
    };
    expect(withImages([pod], { other: "dev.local/other:local" }, true)[0]).toMatchObject({
      spec: { containers: [{ image: "dev.local/other:local" }] },
    });
    expect(() => withImages([pod], { "dynamo-pool-relay": "x" }, true)).toThrow(
      /knative\/ names the image other, which is not given/,
    );
  });
});
