/**
 * The Relay's sources document (file mode) in the Relay's canonical form, and its revision. The
 * ConfigMap holds exactly the canonical text, so the SHA-256 of the file the Relay reads equals
 * the revision it reports as applied (`/engine/state` sources.appliedRevision).
 */
import { createHash } from "node:crypto";
import { compareBytes, hasLoneSurrogate } from "./bytes.ts";

export const SOURCES_VERSION = 1;
export const MAX_SOURCES = 4096;
export const MAX_DOCUMENT_BYTES = 1024 * 1024;
export const MAX_VALUE_BYTES = 512;

export interface SourcesDocument {
  /** The canonical text: compact JSON, sorted sources, Go-style escapes. */
  text: string;
  /** Lowercase hex SHA-256 of `text`. */
  revision: string;
}

export type SourcesResult = { ok: true; document: SourcesDocument } | { ok: false; message: string };

/** `JSON.stringify` leaves these five unescaped; Go's encoding/json (and the Relay) escape them. */
const GO_ESCAPES: Record<string, string> = {
  "&": "\\u0026",
  "<": "\\u003c",
  ">": "\\u003e",
  "\u2028": "\\u2028",
  "\u2029": "\\u2029",
};

export function goEscape(json: string): string {
  return json.replace(/[&<>\u2028\u2029]/g, (c) => GO_ESCAPES[c]!);
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function valueProblem(what: string, value: string): string | undefined {
  if (value.length === 0) return `${what} is empty`;
  if (hasLoneSurrogate(value)) return `${what} ${JSON.stringify(value)} holds an unpaired surrogate`;
  if (Buffer.byteLength(value, "utf8") > MAX_VALUE_BYTES) return `${what} is longer than ${MAX_VALUE_BYTES} bytes`;
  if (value.trim() !== value) return `${what} ${JSON.stringify(value)} has surrounding whitespace`;
  return undefined;
}

/**
 * Builds the document for `namespaces` tied to `connectionRevision`, enforcing the limits the
 * Relay enforces, so a document we write is never one the Relay rejects.
 */
export function sourcesDocument(namespaces: readonly string[], connectionRevision: string | undefined): SourcesResult {
  if (namespaces.length > MAX_SOURCES) {
    return {
      ok: false,
      message: `${namespaces.length} worker namespaces exceed the Relay's limit of ${MAX_SOURCES} sources`,
    };
  }
  const sorted = [...namespaces].sort(compareBytes);
  for (let i = 0; i < sorted.length; i++) {
    const problem = valueProblem("worker namespace", sorted[i]!);
    if (problem) return { ok: false, message: problem };
    if (i > 0 && sorted[i] === sorted[i - 1])
      return { ok: false, message: `worker namespace "${sorted[i]}" is listed twice` };
  }
  if (connectionRevision !== undefined) {
    const problem = valueProblem("connectionRevision", connectionRevision);
    if (problem) return { ok: false, message: problem };
  }
  // Key order is part of the canonical form: version, connectionRevision (when set; JSON.stringify
  // leaves an undefined one out), sources.
  const doc = { version: SOURCES_VERSION, connectionRevision, sources: sorted.map((namespace) => ({ namespace })) };
  const text = goEscape(JSON.stringify(doc));
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_DOCUMENT_BYTES) {
    return {
      ok: false,
      message: `the sources document is ${bytes} bytes, over the Relay's limit of ${MAX_DOCUMENT_BYTES}`,
    };
  }
  return { ok: true, document: { text, revision: sha256Hex(text) } };
}
