// The fault suite (npm run test:faults): its own control plane, whose functions reach the API
// server through a fault proxy. A run of its own, never beside the integration suite: both would
// start the Knative dispatcher on its fixed ports.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "faults",
    include: ["test/faults/**/*.test.ts"],
    globalSetup: ["test/faults/global-setup.ts"],
    setupFiles: ["test/integration/no-refusals.ts"],
    fileParallelism: false,
    testTimeout: 20 * 60_000,
    hookTimeout: 180_000,
  },
});
