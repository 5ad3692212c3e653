// The tests of `npm start` (test/start/): each starts the whole product on this host, with a real
// node (control plane profile node), so they run alone, one after another, after the other suites.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "start",
    include: ["test/start/**/*.test.ts"],
    globalSetup: ["test/start/global-setup.ts"],
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 1_800_000,
  },
});
