// An upgrade, as docs/install.md gives it: the earlier build installed, a pair published under it,
// then knative/ of this build applied over it (global-setup.ts). The pair stays Ready with the
// children it had, and the new build follows what changes next. Needs POOLRELAY_UPGRADE_FROM and
// POOLRELAY_UPGRADE_FROM_IMAGE (scripts/test-e2e-local.sh gives the latest v* tag's build).
import { createHash } from "node:crypto";
import { describe, expect, inject, it } from "vitest";
import { adminClient } from "../integration/helpers.ts";
import { CHILD_REFS, children, condition, rollout, settledDpr } from "../integration/pipeline-helpers.ts";

const survivor = inject("survivor");

describe.skipIf(!survivor)("a pair published before the upgrade", () => {
  const ns = survivor?.namespace ?? "";

  it("stays Ready under the new build, its six children the ones it had", async () => {
    const admin = await adminClient();
    const dpr = await settledDpr(ns, "g1", "is Ready", (d) => condition(d, "Ready")?.status === "True", 120_000);
    expect(condition(dpr, "ServicePublished")?.status).toBe("True");
    const objs = await children(admin, ns);
    for (const [, kind] of CHILD_REFS) expect(objs[kind]?.metadata.uid, kind).toBe(survivor!.uids[kind]);
  });

  it("follows a DGD rollout made after it", async () => {
    const admin = await adminClient();
    await rollout(ns, ["cccc3333", "dddd4444"]);
    const rolled = await settledDpr(
      ns,
      "g1",
      "lists both worker generations",
      (d) => d.status?.["workerNamespaces"]?.length === 2,
      120_000,
    );
    expect(rolled.status?.["workerNamespaces"]).toEqual([`${ns}-g1-cccc3333`, `${ns}-g1-dddd4444`]);
    const sources = (await children(admin, ns))["ConfigMap"]!.data["sources.json"]!;
    expect(rolled.status?.["sourcesRevision"]).toBe(createHash("sha256").update(sources, "utf8").digest("hex"));
    expect(JSON.parse(sources)).toMatchObject({
      sources: [{ namespace: `${ns}-g1-cccc3333` }, { namespace: `${ns}-g1-dddd4444` }],
    });
  });
});
