/**
 * Reads Kubernetes objects from YAML files, folders or stdin, keeping where each came from so
 * every error names the file and document.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";

export interface SourcedObject {
  object: Record<string, unknown>;
  /** `file#document-index`, for messages. */
  origin: string;
}

export class InputError extends Error {}

/** A file's text, or an error naming it (a folder given as a file, no permission). */
export function readText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new InputError(`${file}: cannot read: ${(err as Error).message}`);
  }
}

function yamlFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .filter((f) => /\.(ya?ml|json)$/.test(f))
    .sort()
    .map((f) => join(path, f));
}

export function parseObjects(text: string, file: string): SourcedObject[] {
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs)) return [];
  const out: SourcedObject[] = [];
  docs.forEach((doc, i) => {
    const origin = `${file}#${i + 1}`;
    if (doc.errors.length > 0) {
      const e = doc.errors[0]!;
      const line = e.linePos?.[0]?.line;
      throw new InputError(`${file}${line ? `:${line}` : ""}: invalid YAML: ${e.message.split("\n")[0]}`);
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return;
    if (typeof value !== "object" || Array.isArray(value)) {
      throw new InputError(
        `${origin}: expected a Kubernetes object, got ${Array.isArray(value) ? "a list" : typeof value}`,
      );
    }
    const object = value as Record<string, unknown>;
    if (object["kind"] === "List" && Array.isArray(object["items"])) {
      (object["items"] as Record<string, unknown>[]).forEach((item, j) =>
        out.push({ object: item, origin: `${origin}.items[${j}]` }),
      );
    } else {
      out.push({ object, origin });
    }
  });
  return out;
}

export function readObjects(paths: readonly string[], stdin: () => string): SourcedObject[] {
  return paths.flatMap((path) => {
    if (path === "-") return parseObjects(stdin(), "<stdin>");
    let files: string[];
    try {
      files = yamlFiles(path);
    } catch {
      throw new InputError(`${path}: no such file or folder`);
    }
    return files.flatMap((file) => parseObjects(readText(file), file));
  });
}
