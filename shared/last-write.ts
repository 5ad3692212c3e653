/**
 * Whether a child's add or update event shows the apply function's own write as the object's last
 * change. Every apply run that wrote either wrote the status from what its writes returned, or
 * answers with a report (applied or rejected) whose status run reads every child after the writes,
 * or fails and is redelivered: the child's own event brings status nothing new. Skipping it saves
 * a status run for each child apply creates or changes (publish, rollout).
 *
 * Only ever a reason to skip, and it errs towards a run: any other manager's entry as recent as
 * apply's (times have whole seconds, so a tie cannot be ordered), an entry without a time, a
 * deletion in progress (a delete sets deletionTimestamp without a managedFields entry), or no
 * entry of apply's server-side apply on the object itself (not a subresource).
 */
import { APPLY_FIELD_MANAGER } from "./names.ts";

interface ManagedFieldsEntry {
  manager?: unknown;
  operation?: unknown;
  subresource?: unknown;
  time?: unknown;
}

const timeOf = (entry: ManagedFieldsEntry) => (typeof entry.time === "string" ? Date.parse(entry.time) : Number.NaN);

export function lastWrittenByApply(obj: { metadata?: unknown }): boolean {
  const metadata = (obj.metadata ?? {}) as { deletionTimestamp?: unknown; managedFields?: unknown };
  if (metadata.deletionTimestamp !== undefined || !Array.isArray(metadata.managedFields)) return false;
  const entries = metadata.managedFields as ManagedFieldsEntry[];
  const isApply = (e: ManagedFieldsEntry) =>
    e.manager === APPLY_FIELD_MANAGER && e.operation === "Apply" && (e.subresource ?? "") === "";
  const own = entries.find(isApply);
  if (!own) return false;
  const at = timeOf(own);
  return !Number.isNaN(at) && entries.every((e) => e === own || timeOf(e) < at);
}
