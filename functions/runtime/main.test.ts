// The entry point as a process: it serves the bundle's function, and once it listens asks the
// bundle to open its API connection (the bundles of functions that read the API server export
// `preconnect`, made by serve.ts from the function's environment).
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../shared/config.ts";
import type { KubeClient } from "../../shared/kube/client.ts";
import { preconnect, type Environment } from "./serve.ts";
import { sinkPost } from "./sink.ts";

const main = fileURLToPath(new URL("./main.ts", import.meta.url));
const bundle = fileURLToPath(new URL("../../test/fixtures/preconnecting-bundle.mjs", import.meta.url));

it("asks the bundle to preconnect once it listens", async () => {
  const child = spawn(process.execPath, [main, "--target=preconnecting", `--source=${bundle}`, "--port=0"], {
    env: { ...process.env, NODE_ENV: "development" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (c: Buffer) => {
        out += c.toString("utf8");
        if (out.includes("URL: ") && out.includes("preconnect called")) resolve();
      });
      child.once("exit", (code) => reject(new Error(`main exited with ${code}: ${out}`)));
    });
  } finally {
    child.kill();
  }
  const port = /URL: http:\/\/localhost:(\d+)\//.exec(out)?.[1];
  expect(Number(port)).toBeGreaterThan(0);
});

describe("the bundles' preconnect", () => {
  const environment = (kube: Environment["kube"]): Environment => ({
    kube,
    config: parseConfig({}),
    now: () => "2026-03-01T00:00:00Z",
    post: sinkPost({}),
    log: () => {},
  });

  it("asks the function's client to preconnect", async () => {
    let asked = 0;
    const client = { preconnect: async () => void asked++ } as unknown as KubeClient;
    await preconnect(environment(async () => client))();
    expect(asked).toBe(1);
  });

  it("never fails, also when the credentials cannot be loaded: the first event reports that", async () => {
    await expect(preconnect(environment(() => Promise.reject(new Error("no kubeconfig"))))()).resolves.toBeUndefined();
  });
});
