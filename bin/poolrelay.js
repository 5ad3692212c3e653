#!/usr/bin/env node
// Node >= 22.20 runs the TypeScript sources directly (type stripping; the floor is nock's, for the tests); no build step.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 20)) {
  process.stderr.write(`poolrelay needs Node >= 22.20, this is ${process.version}\n`);
  process.exit(1);
}
const { main } = await import("../cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
