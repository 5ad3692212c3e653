/**
 * CloudEvents exactly as a Knative ApiServerSource in Resource mode sends them: type per watch
 * event, the API server URL as source, the guessed-plural subject, the kind/name/namespace/
 * apiversion extensions, and the whole object as data.
 */
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { SourceEventType } from "../../shared/events.ts";

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";

const TYPES: Record<WatchEventType, string> = {
  ADDED: SourceEventType.Add,
  MODIFIED: SourceEventType.Update,
  DELETED: SourceEventType.Delete,
};

/** ApiServerSource's resource guess (meta.UnsafeGuessKindToResource), reproduced with its flaws. */
export function guessPlural(kind: string): string {
  const lower = kind.toLowerCase();
  if (lower.endsWith("s")) return `${lower}es`;
  if (lower.endsWith("y")) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}

export interface WatchedObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
}

export function apiServerEvent(type: WatchEventType, obj: WatchedObject, server: string, id: string, time: string): CloudEvent {
  const namespace = obj.metadata.namespace ?? "";
  return {
    specversion: "1.0",
    id,
    type: TYPES[type],
    source: server,
    subject: `/apis/${obj.apiVersion}/namespaces/${namespace}/${guessPlural(obj.kind)}/${obj.metadata.name}`,
    time,
    datacontenttype: "application/json",
    extensions: { kind: obj.kind, name: obj.metadata.name, namespace, apiversion: obj.apiVersion },
    data: obj,
  };
}
