/** The Kubernetes objects in a multi-document YAML file (manifests, samples, CRDs). */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { LineCounter, parseAllDocuments } from "yaml";
import type { KubeObject } from "../shared/kube/client.ts";

/**
 * Fails on any syntax error, naming the file, line and column of each: the yaml package recovers
 * and still returns documents (an unclosed `{` comes back as an object), and a manifest read that
 * way would be installed half-right instead of refused.
 */
export function readObjects(file: string): KubeObject[] {
  const lineCounter = new LineCounter();
  // Plain messages; the position comes from lineCounter, once, in the file:line:col form editors link.
  const docs = parseAllDocuments(readFileSync(file, "utf8"), { lineCounter, prettyErrors: false });
  const errors = docs
    .flatMap((d) => d.errors)
    .map((e) => {
      const { line, col } = lineCounter.linePos(e.pos[0]);
      return `${file}:${line}:${col}: ${e.message}`;
    });
  if (errors.length > 0) throw new Error(`invalid YAML:\n${errors.join("\n")}`);
  return docs.map((d) => d.toJS() as KubeObject).filter(Boolean);
}

/** Every .yaml file under `dir`, recursively, sorted. */
export function yamlFiles(dir: string): string[] {
  return readdirSync(dir)
    .flatMap((entry) => {
      const path = join(dir, entry);
      return statSync(path).isDirectory() ? yamlFiles(path) : entry.endsWith(".yaml") ? [path] : [];
    })
    .sort();
}
