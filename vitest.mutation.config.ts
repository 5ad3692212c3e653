import { defineConfig } from "vitest/config";

// The tests StrykerJS runs against each mutant of shared/ and functions/: the unit tests that
// exercise them, without a control plane.
export default defineConfig({
  test: {
    include: ["shared/**/*.test.ts", "functions/**/*.test.ts", "test/unit/**/*.test.ts"],
  },
});
