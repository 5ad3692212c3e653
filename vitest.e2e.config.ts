// npm run test:e2e: the end-to-end suite on an existing cluster (test/e2e/global-setup.ts says what
// it needs), one file after another as the integration suite.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "e2e",
    include: ["test/e2e/**/*.test.ts"],
    globalSetup: ["test/e2e/global-setup.ts"],
    fileParallelism: false,
    testTimeout: 360_000,
    hookTimeout: 420_000,
  },
});
