import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["shared/**/*.test.ts", "cli/**/*.test.ts", "test/unit/**/*.test.ts"],
        },
      },
    ],
  },
});
