// The built entry point as the image runs it (npm run build, which this file runs first): the
// product's bundles import the one Functions Framework bundled beside them, so dist/functions
// alone serves them, with no node_modules anywhere above it (the image has none); a source that
// registered with the installed framework package instead is served by that package. The code
// cache the build fills beside the bundles is used where it was filled for their paths.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { toBinary } from "../../shared/cloudevent.ts";
import { EventType, productEvent } from "../../shared/events.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** Starts `main` serving `target` from `source`, posts one event, and answers its HTTP status. */
async function serveOnce(main: string, target: string, source: string): Promise<number> {
  return (await served(main, target, source)).status;
}

/** The same, with what the process printed until the answer. */
async function served(
  main: string,
  target: string,
  source: string,
  env: Record<string, string> = {},
): Promise<{ status: number; output: string }> {
  const child = spawn(process.execPath, [main, `--target=${target}`, `--source=${source}`, "--port=0"], {
    env: { ...process.env, NODE_ENV: "development", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  try {
    const port = await new Promise<string>((resolve, reject) => {
      const take = (c: Buffer) => {
        out += c.toString("utf8");
        const found = /URL: http:\/\/localhost:(\d+)\//.exec(out)?.[1];
        if (found) resolve(found);
      };
      child.stdout.on("data", take);
      child.stderr.on("data", take);
      child.once("exit", (code) => reject(new Error(`main exited with ${code}: ${out}`)));
    });
    const event = productEvent(
      EventType.Reconcile,
      { namespace: "team-a", name: "g1", cause: "Drift" },
      { source: "/test", cause: "c", time: "2026-03-01T00:00:00Z" },
    );
    const res = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", ...toBinary(event) });
    await res.arrayBuffer();
    return { status: res.status, output: out };
  } finally {
    child.kill();
  }
}

beforeAll(() => {
  const build = spawnSync(process.execPath, ["scripts/build-functions.ts"], { cwd: root, encoding: "utf8" });
  if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}${build.stderr}`);
}, 120_000);

describe("the built entry point", () => {
  it("serves a product bundle from a copy of dist/functions with no node_modules above it, as in the image", async () => {
    const app = join(mkdtempSync(join(tmpdir(), "poolrelay-image-")), "functions");
    cpSync(join(root, "dist/functions"), app, { recursive: true });
    for (let dir = app; dir !== dirname(dir); dir = dirname(dir))
      expect(existsSync(join(dir, "node_modules"))).toBe(false);
    expect(await serveOnce(join(app, "main.mjs"), "dead-letter", join(app, "dead-letter/index.mjs"))).toBe(204);
  });

  it("starts from the code cache only once it is filled where the bundles are, as the image fills it", async () => {
    const app = join(mkdtempSync(join(tmpdir(), "poolrelay-image-")), "functions");
    cpSync(join(root, "dist/functions"), app, { recursive: true });
    // Node's own account of each module it compiles from the cache.
    const debug = { NODE_DEBUG_NATIVE: "COMPILE_CACHE" };
    const accepted = (file: string) => `cache for ${pathToFileURL(join(app, file)).href} was accepted`;
    const copied = await served(join(app, "main.mjs"), "dead-letter", join(app, "dead-letter/index.mjs"), debug);
    const fill = spawnSync(process.execPath, [join(app, "fill-compile-cache.mjs")], { encoding: "utf8" });
    expect(fill.stdout).toContain("compile cache: 5 bundles compiled");
    const filled = await served(join(app, "main.mjs"), "dead-letter", join(app, "dead-letter/index.mjs"), debug);
    expect(filled.status).toBe(204);
    expect(filled.output).toContain(accepted("framework.mjs"));
    expect(filled.output).toContain(accepted("dead-letter/index.mjs"));
    // The cache copied from dist/functions is keyed by dist's paths: there it compiled as without one.
    expect(copied.status).toBe(204);
    expect(copied.output).not.toContain(accepted("framework.mjs"));
  });

  it("serves a source that registered with the installed framework package", async () => {
    expect(
      await serveOnce(
        join(root, "dist/functions/main.mjs"),
        "preconnecting",
        join(root, "test/fixtures/preconnecting-bundle.mjs"),
      ),
    ).toBe(204);
  });
});
