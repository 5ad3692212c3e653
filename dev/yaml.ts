/** The Kubernetes objects in a multi-document YAML file (manifests, samples, CRDs). */
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import type { KubeObject } from "../shared/kube/client.ts";

export function readObjects(file: string): KubeObject[] {
  return parseAllDocuments(readFileSync(file, "utf8")).map((d) => d.toJS() as KubeObject).filter(Boolean);
}
