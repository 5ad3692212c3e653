// The signal tests of `npm start` (test/start/): each starts the whole product on this host, with
// Knative's fixed ports, so they run alone, after the other suites.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "start",
    include: ["test/start/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 360_000,
  },
});
