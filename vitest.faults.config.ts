// The fault suite (npm run test:faults): its own control plane (profile node), whose product passes
// the suite's fault proxies (test/faults/global-setup.ts). A run of its own: a real node is heavy,
// and each test file shares the one cluster.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "faults",
    include: ["test/faults/**/*.test.ts"],
    globalSetup: ["test/faults/global-setup.ts"],
    setupFiles: ["test/integration/no-oom-kills.ts"],
    fileParallelism: false,
    testTimeout: 20 * 60_000,
    hookTimeout: 180_000,
  },
});
