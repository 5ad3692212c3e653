/**
 * The CRDs a local control plane gets: the product's own (crds/), the Dynamo fixtures the project
 * wrote (test/fixtures/crds/) and, when KNATIVE_CRDS_DIR names a folder, the Knative CRDs there.
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

export interface CrdSet {
  crds: KubeObject[];
  /** Why a set was left out, for the caller to report. */
  notes: string[];
}

export function crdsToInstall(knativeDir = process.env["KNATIVE_CRDS_DIR"]): CrdSet {
  const crds = [...yamlObjects(join(root, "crds")), ...yamlObjects(join(root, "test/fixtures/crds"))];
  if (!knativeDir) return { crds, notes: ["KNATIVE_CRDS_DIR is not set: Knative CRDs are not installed"] };
  const knative = yamlObjects(knativeDir);
  if (knative.length === 0) throw new Error(`KNATIVE_CRDS_DIR=${knativeDir} holds no CustomResourceDefinition`);
  return { crds: [...crds, ...knative], notes: [] };
}
