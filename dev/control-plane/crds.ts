/**
 * The CRDs every local control plane gets: the product's own (crds/) and the Dynamo fixtures the
 * project wrote (test/fixtures/crds/). Profile `node` installs Knative's with Knative (dev/node/knative.ts).
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readObjects } from "../yaml.ts";
import type { KubeObject } from "../../shared/kube/client.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

function yamlObjects(dir: string): KubeObject[] {
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .flatMap((f) => readObjects(join(dir, f)))
    .filter((o) => o?.kind === "CustomResourceDefinition");
}

export function crdsToInstall(): KubeObject[] {
  return [...yamlObjects(join(root, "crds")), ...yamlObjects(join(root, "test/fixtures/crds"))];
}
