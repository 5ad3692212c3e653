// The requeue's latency bound, stated once (docs/design.md) from the code that makes it.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseSourceConfig } from "../../shared/config.ts";
import { requeueBoundMs, requeueTickMs } from "../../shared/requeue.ts";
import { claim } from "../docs-text.ts";

const SINK = { K_SINK: "http://broker-ingress.knative-eventing.svc.cluster.local/dynamo-system/dynamo-pool-relay" };

describe("the requeue bound", () => {
  it("is a quarter of the period for what the functions have not acted on, the whole period when settling, each plus one tick", () => {
    expect(requeueTickMs(60_000)).toBe(5_000);
    expect(requeueBoundMs(60_000)).toEqual({ prompt: 20_000, settling: 65_000 });
    expect(requeueBoundMs(120_000)).toEqual({ prompt: 40_000, settling: 130_000 });
  });

  it("is what docs/design.md states, at the default REQUEUE_SECONDS", () => {
    const bound = requeueBoundMs(parseSourceConfig(SINK).requeueSeconds * 1000);
    const [, prompt, settling] = claim(
      /left undone within (\d+) s of the pair's last change when the functions have not acted on it\s+\(unobserved, not showing its DGD, children or status off\) and within (\d+) s when it is settling or\s+blocked \(`requeueBoundMs`/,
    );
    expect([Number(prompt) * 1000, Number(settling) * 1000]).toEqual([bound.prompt, bound.settling]);
  });

  it("is stated nowhere else: the README and limits.md link to it", () => {
    const design = readFileSync(new URL("../../docs/design.md", import.meta.url), "utf8");
    expect(design).toMatch(/within 65 s when it is settling/);
    for (const doc of ["README.md", "docs/limits.md"]) {
      const text = readFileSync(new URL(`../../${doc}`, import.meta.url), "utf8");
      expect(text).toMatch(/design\.md#the-event-source-the-requeue-the-resync-and-the-latency-bound/);
      expect(text).not.toMatch(/\b(20|65) s\b[^.]*(settling|last change|acted on)/);
    }
  });
});
