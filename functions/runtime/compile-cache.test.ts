// fillCompileCache, with Node's compile-cache switch replaced (it holds one directory per
// process, for good): where it asks Node to keep the cache, which modules it evaluates (the
// framework and each function's bundle, nothing else), that it flushes after them, and how it
// refuses when Node cannot keep the cache there. The image's run of it, as a process, is
// test/integration/entry-point.test.ts.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { constants } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { beforeEach, describe, expect, it, vi } from "vitest";

const log: string[] = [];
const node = vi.hoisted((): { answer: unknown } => ({ answer: undefined }));
vi.mock("node:module", async (actual) => ({
  ...(await actual<typeof import("node:module")>()),
  enableCompileCache: (dir: string) => (log.push(`enable ${dir}`), node.answer),
  flushCompileCache: () => void log.push("flush"),
}));
const { COMPILE_CACHE, fillCompileCache } = await import("./compile-cache.ts");

/** A dist/functions-like directory: framework.mjs, bundles `<name>/index.mjs`, and look-alikes that are no bundle. */
function functionsDir(bundles: readonly string[]): URL {
  const root = mkdtempSync(join(tmpdir(), "functions-"));
  const mark = (name: string) => `globalThis.__compileCacheLog.push("evaluate ${name}");\n`;
  writeFileSync(join(root, "framework.mjs"), mark("framework.mjs"));
  for (const b of bundles) {
    mkdirSync(join(root, b));
    writeFileSync(join(root, b, "index.mjs"), mark(`${b}/index.mjs`));
  }
  // A directory without index.mjs and a loose module: neither is a function's bundle.
  mkdirSync(join(root, "shared"));
  writeFileSync(join(root, "shared", "chunk.mjs"), mark("shared/chunk.mjs"));
  writeFileSync(join(root, "main.mjs"), mark("main.mjs"));
  return pathToFileURL(`${root}/`);
}

beforeEach(() => {
  log.length = 0;
  (globalThis as { __compileCacheLog?: string[] }).__compileCacheLog = log;
});

describe("fillCompileCache", () => {
  it("keeps the cache in .compile-cache/ beside the bundles, evaluates the framework and each bundle, then flushes", async () => {
    node.answer = { status: constants.compileCacheStatus.ENABLED, directory: "/whatever" };
    const functions = functionsDir(["apply", "status"]);
    expect(await fillCompileCache(functions)).toBe(3);
    const dir = fileURLToPath(new URL("./.compile-cache/", functions));
    expect(COMPILE_CACHE).toBe("./.compile-cache/");
    expect(log[0]).toBe(`enable ${dir}`);
    expect(log.slice(1, -1).sort()).toEqual([
      "evaluate apply/index.mjs",
      "evaluate framework.mjs",
      "evaluate status/index.mjs",
    ]);
    expect(log.at(-1)).toBe("flush");
  });

  it.each([
    {
      name: "on in another directory already",
      answer: { status: constants.compileCacheStatus.ALREADY_ENABLED, directory: "/var/cache/node" },
      why: "Node's is in /var/cache/node already (NODE_COMPILE_CACHE)",
    },
    {
      name: "turned off",
      answer: { status: constants.compileCacheStatus.DISABLED },
      why: "Node's is turned off (NODE_DISABLE_COMPILE_CACHE)",
    },
    {
      name: "failing, saying why",
      answer: { status: constants.compileCacheStatus.FAILED, message: "EACCES: permission denied" },
      why: "EACCES: permission denied",
    },
  ])("refuses, evaluating nothing, when Node's cache is $name", async ({ answer, why }) => {
    node.answer = answer;
    const functions = functionsDir(["apply"]);
    const dir = fileURLToPath(new URL("./.compile-cache/", functions));
    await expect(fillCompileCache(functions)).rejects.toThrow(
      new Error(`the compile cache cannot be kept in ${dir}: ${why}`),
    );
    expect(log).toEqual([`enable ${dir}`]);
  });
});
