import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";

/** A shell that starts a watching node process in the background and then exits (or, with `stay`, waits for it). */
function run(stay: boolean): Promise<string> {
  const module = new URL("./parent-watch.ts", import.meta.url).pathname;
  // Without `stay` the shell names itself as the parent: it may be gone before the import is done.
  const parent = stay ? "" : `, '"$$"'`;
  const script = `import("${module}").then((m) => { m.onParentGone(() => { console.log("gone"); process.exit(0); }, 20${parent}); setTimeout(() => { console.log("still here"); process.exit(0); }, 1500); })`;
  const shell = stay ? `${process.execPath} -e '${script}'` : `${process.execPath} -e '${script}' & sleep 0.3; exit 0`;
  const child = spawn("sh", ["-c", shell], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  // The output pipe closes when the last writer, the node process, exits.
  return new Promise((resolve) => child.stdout.on("close", () => resolve(out.trim())));
}

describe("onParentGone", () => {
  it("fires once the parent has exited and the process is re-parented", async () => {
    expect(await run(false)).toBe("gone");
  });

  it("does not fire while the parent lives", async () => {
    expect(await run(true)).toBe("still here");
  });
});
