import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          // A guard against a hang, not a measure: npm test's lanes run them beside a cluster starting.
          testTimeout: 20_000,
          include: [
            "shared/**/*.test.ts",
            "cli/**/*.test.ts",
            "dev/**/*.test.ts",
            "bench/**/*.test.ts",
            "functions/**/*.test.ts",
            "test/unit/**/*.test.ts",
          ],
        },
      },
      {
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          globalSetup: ["test/integration/global-setup.ts"],
          setupFiles: ["test/integration/no-oom-kills.ts"],
          // One control plane on 2 cores: files run one after another, tests poll the real world.
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
