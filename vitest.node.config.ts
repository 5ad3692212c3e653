// The real-node suite (test/node/): a control plane of profile node, with a real kubelet,
// containerd and runc running the product's image as pods. A run of its own after the others.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "node",
    include: ["test/node/**/*.test.ts"],
    globalSetup: ["test/node/global-setup.ts"],
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 600_000,
  },
});
