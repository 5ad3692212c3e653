/** Whose an object is: only a controller reference naming a DynamoPoolRelay's UID makes it that DynamoPoolRelay's. */

export interface Owned {
  metadata: { ownerReferences?: { uid: string; controller?: boolean }[] };
}

export function controlledBy(obj: Owned, uid: string | undefined): boolean {
  const controller = obj.metadata.ownerReferences?.find((r) => r.controller === true);
  return uid !== undefined && controller?.uid === uid;
}

export type Ownership = "absent" | "ours" | "foreign";

/** A same-named object is not enough: without our controller reference it is foreign. */
export function ownership(obj: Owned | undefined, uid: string | undefined): Ownership {
  if (!obj) return "absent";
  return controlledBy(obj, uid) ? "ours" : "foreign";
}
