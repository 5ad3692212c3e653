/**
 * Which DynamoPoolRelays a periodic resync reconciles. ApiServerSource cannot watch
 * DynamoPoolRelays and loses events during gaps, so every tick picks up any generation not yet
 * observed, plus one slice of all objects (by UID), so that each one is fully reconciled every
 * `slots` ticks without recording anything: a steady-state resync writes nothing.
 */
import { createHash } from "node:crypto";

export interface ResyncCandidate {
  metadata: { namespace?: string; name: string; uid?: string; generation?: number; deletionTimestamp?: string };
  status?: { observedGeneration?: number };
}

export type ResyncReason = "Unobserved" | "Periodic";

export function tickOf(time: string, periodSeconds: number): number {
  return Math.floor(Date.parse(time) / (periodSeconds * 1000));
}

export function slotOf(uid: string, slots: number): number {
  return parseInt(createHash("sha256").update(uid).digest("hex").slice(0, 8), 16) % slots;
}

export function resyncReason(dpr: ResyncCandidate, tick: number, slots: number): ResyncReason | undefined {
  if (dpr.metadata.deletionTimestamp) return undefined;
  if (dpr.status?.observedGeneration === undefined || dpr.status.observedGeneration < (dpr.metadata.generation ?? 0)) return "Unobserved";
  if (dpr.metadata.uid !== undefined && slotOf(dpr.metadata.uid, slots) === tick % slots) return "Periodic";
  return undefined;
}
