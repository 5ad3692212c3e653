// `poolrelay` installed as the README says: `npm install -g .` from a checkout (a link to it, so
// Node strips the types of the sources in place), then run from elsewhere by its name on PATH.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { claim } from "../docs-text.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  version: string;
  bin: Record<string, string>;
};

describe("poolrelay installed with npm install -g", () => {
  it("runs by its name from any directory, rendering the checkout's samples", () => {
    claim(/npm install -g \.`/);
    const prefix = mkdtempSync(join(tmpdir(), "poolrelay-global-"));
    const install = spawnSync("npm", ["install", "-g", "--prefix", prefix, "--no-audit", "--no-fund", "."], {
      cwd: root,
      encoding: "utf8",
    });
    expect(install.stderr).not.toMatch(/ERR!/);
    expect(install.status).toBe(0);
    const bin = join(prefix, "bin", "poolrelay");
    expect(Object.keys(pkg.bin)).toEqual(["poolrelay"]);
    expect(existsSync(bin)).toBe(true);
    const env = { ...process.env, PATH: `${join(prefix, "bin")}${delimiter}${dirname(process.execPath)}` };
    expect(
      spawnSync("poolrelay", ["--version"], { cwd: prefix, env: { ...env, PATH: dirname(process.execPath) } }).status,
    ).not.toBe(0);
    const version = spawnSync("poolrelay", ["--version"], { cwd: prefix, encoding: "utf8", env });
    expect(version.stdout.trim()).toBe(pkg.version);
    const render = spawnSync("poolrelay", ["render", "-f", join(root, "samples"), "--now", "2026-01-01T00:00:00Z"], {
      cwd: prefix,
      encoding: "utf8",
      env,
    });
    expect(render.stdout).toMatch(/^# DynamoPoolRelay inference\/llama: eligible, apply 6 objects$/m);
    expect(render.status).toBe(0);
  });
});
