#!/usr/bin/env node
// Node >= 22.18 runs the TypeScript sources directly (type stripping); no build step.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  process.stderr.write(`poolrelay needs Node >= 22.19, this is ${process.version}\n`);
  process.exit(1);
}
const { main } = await import("../cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
