// npm run test:e2e: the end-to-end suite on an existing cluster (test/e2e/global-setup.ts says what
// it needs), one file after another as the integration suite: upgrade.test.ts first (its pair was
// published before the upgrade), uninstall.test.ts last (it removes the product).
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const rank = (file: TestSpecification) =>
  file.moduleId.endsWith("/upgrade.test.ts") ? 0 : file.moduleId.endsWith("/uninstall.test.ts") ? 2 : 1;

class Stages extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    name: "e2e",
    include: ["test/e2e/**/*.test.ts"],
    globalSetup: ["test/e2e/global-setup.ts"],
    fileParallelism: false,
    sequence: { sequencer: Stages },
    testTimeout: 360_000,
    hookTimeout: 420_000,
  },
});
