// The uninstall docs/install.md gives, run as a user runs it (the suite runs this file last): every
// DynamoPoolRelay deleted while the functions still run, then `kubectl delete -k knative/`. Nothing
// of the product is left but what the user made: the DGDs and their namespaces stay.
import { describe, expect, inject, it } from "vitest";
import { KNATIVE_DIR, PRODUCT_NAMESPACE, productManifests } from "../../dev/product.ts";
import type { KubeObject } from "../../shared/kube/client.ts";
import { adminClient, eventually } from "../integration/helpers.ts";
import { CHILD_REFS, children } from "../integration/pipeline-helpers.ts";
import { kubectlRun, ref } from "./kubectl.ts";
import { createPair, e2eNamespace } from "./objects.ts";
import { E2E_NAMESPACE_LABEL } from "./settings.ts";

const MANAGED = "app.kubernetes.io/managed-by=dynamo-pool-relay";
const PART_OF = "app.kubernetes.io/part-of=dynamo-pool-relay";

const kubectl = (...args: string[]) => kubectlRun(inject("kubectl"), inject("kubeconfig"), args);

describe("uninstall", () => {
  it("removes every object of knative/ and every pair's children; the DGDs and their namespaces stay", async () => {
    const admin = await adminClient();
    const manifests = productManifests(inject("kubectl"));
    // A pair of its own, published: whatever ran before, there are children to remove.
    const ns = await e2eNamespace(admin, "e2e-uninstall");
    await createPair(admin, ns, inject("relayImage"));
    await eventually(
      "the pair's six children",
      async () => Object.values(await children(admin, ns)).every((o) => o !== undefined),
      120_000,
    );
    const namespaces = (await admin.list<KubeObject>("v1", "Namespace", undefined, `${E2E_NAMESPACE_LABEL}=true`)).map(
      (n) => n.metadata.name,
    );
    const dgds = async () =>
      (
        await Promise.all(
          namespaces.map((n) => admin.list<KubeObject>("nvidia.com/v1beta1", "DynamoGraphDeployment", n)),
        )
      )
        .flat()
        .map((d) => `${d.metadata.namespace}/${d.metadata.name} ${d.metadata.uid}`)
        .sort();
    const childrenLeft = async () =>
      (
        await Promise.all(
          CHILD_REFS.map(([apiVersion, kind]) => admin.list<KubeObject>(apiVersion, kind, undefined, MANAGED)),
        )
      )
        .flat()
        .map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`);
    const named = (o: KubeObject) => `${o.kind} ${o.metadata.namespace ?? ""}/${o.metadata.name}`;
    /** The objects of knative/ there now, and every ClusterRole and binding of the product (an earlier build's too). */
    const productLeft = async () => {
      const found = await Promise.all(manifests.map(async (o) => ((await admin.get(ref(o))) ? [named(o)] : [])));
      const clusterWide = await Promise.all(
        ["ClusterRole", "ClusterRoleBinding"].map((kind) =>
          admin.list<KubeObject>("rbac.authorization.k8s.io/v1", kind, undefined, PART_OF),
        ),
      );
      return [...new Set([...found.flat(), ...clusterWide.flat().map(named)])].sort();
    };

    // Presence first: the product, the children, the user's DGDs.
    const dgdsBefore = await dgds();
    expect(dgdsBefore.length).toBeGreaterThan(0);
    expect((await childrenLeft()).length).toBeGreaterThanOrEqual(CHILD_REFS.length);
    expect(await productLeft()).toEqual(expect.arrayContaining(manifests.map(named)));

    kubectl("delete", "dynamopoolrelays", "--all", "--all-namespaces", "--wait");
    kubectl("delete", "-k", KNATIVE_DIR, "--wait");

    expect(await productLeft()).toEqual([]);
    expect(await admin.get({ apiVersion: "v1", kind: "Namespace", name: PRODUCT_NAMESPACE })).toBeUndefined();
    await eventually(
      "the children collected",
      async () => ((await childrenLeft()).length === 0 ? true : undefined),
      120_000,
    );
    expect(await dgds()).toEqual(dgdsBefore);
    for (const n of namespaces)
      expect(await admin.get({ apiVersion: "v1", kind: "Namespace", name: n }), n).toMatchObject({
        status: { phase: "Active" },
      });
  });
});
