import { describe, expect, it } from "vitest";
import { dgd, dpr } from "../test/builders.ts";
import { decide, decideAmong } from "./decide.ts";
import { DEFAULT_OPERATOR_DEFAULTS } from "./eligibility.ts";
import { MAX_SOURCES } from "./sources-document.ts";

const MODE = "nvidia.com/dynamo-kube-discovery-mode";
const pool = (name: string, labels: Record<string, string> = { pool: "a" }, annotations?: Record<string, string>) =>
  dgd({ name, labels, ...(annotations ? { annotations } : {}) });
const selecting = dpr({ name: "relay", spec: { dgdSelector: { matchLabels: { pool: "a" } } } });

describe("decideAmong", () => {
  it("without a selector decides as decide() does, from the DGD of the DynamoPoolRelay's name", () => {
    const among = decideAmong(dpr(), [pool("other"), dgd(), pool("third")], DEFAULT_OPERATOR_DEFAULTS);
    expect(among).toEqual(decide(dpr(), dgd(), DEFAULT_OPERATOR_DEFAULTS));
    expect(among).not.toHaveProperty("selection");
    expect(decideAmong(dpr(), [pool("other")], DEFAULT_OPERATOR_DEFAULTS)).toMatchObject({
      action: "withdraw",
      reason: "DGDNotFound",
    });
  });

  it("with a selector applies the union of the selected eligible DGDs' worker namespaces, naming those left out", () => {
    const d = decideAmong(
      selecting,
      [
        pool("b"),
        pool("model.v1"),
        pool("c", { pool: "a" }, { [MODE]: "container" }),
        pool("x", { pool: "other" }),
        pool("relay", { pool: "b" }),
      ],
      DEFAULT_OPERATOR_DEFAULTS,
    );
    expect(d).toMatchObject({
      action: "apply",
      workerNamespaces: ["team-a-b", "team-a-model-v1"],
      selection: { selected: 3, eligible: 2, excluded: [{ name: "c", reason: "DiscoveryModeNotPod" }] },
    });
    if (d.action !== "apply") return;
    expect(JSON.parse(d.sources.text)).toMatchObject({
      sources: [{ namespace: "team-a-b" }, { namespace: "team-a-model-v1" }],
    });
  });

  it("with a selector ignores the DGD of its own name unless the selector matches it", () => {
    expect(decideAmong(selecting, [pool("relay", { pool: "b" })], DEFAULT_OPERATOR_DEFAULTS)).toMatchObject({
      action: "withdraw",
      reason: "NoDGDSelected",
      selection: { selected: 0, eligible: 0, excluded: [] },
    });
  });

  it("withdraws when no selected DGD is eligible", () => {
    expect(
      decideAmong(selecting, [pool("c", { pool: "a" }, { [MODE]: "container" })], DEFAULT_OPERATOR_DEFAULTS),
    ).toMatchObject({ action: "withdraw", reason: "NoEligibleDGD", selection: { selected: 1 } });
  });

  it("refuses a union over the Relay's limit, whole, rather than cutting it", () => {
    const many = Array.from({ length: MAX_SOURCES + 1 }, (_, i) => pool(`d${i}`));
    expect(decideAmong(selecting, many, DEFAULT_OPERATOR_DEFAULTS)).toMatchObject({
      action: "withdraw",
      reason: "SourcesLimitExceeded",
      message: `${MAX_SOURCES + 1} worker namespaces exceed the Relay's limit of ${MAX_SOURCES} sources`,
      selection: { selected: MAX_SOURCES + 1, eligible: MAX_SOURCES + 1, excluded: [] },
    });
  });
});
