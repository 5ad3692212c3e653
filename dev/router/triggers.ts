/** Routes for the local broker, read from the Triggers in knative/ so that both route alike. */
import { fileURLToPath } from "node:url";
import { readObjects } from "../yaml.ts";
import type { Route } from "./broker.ts";

export const TRIGGERS_FILE = fileURLToPath(new URL("../../knative/triggers.yaml", import.meta.url));

interface Trigger {
  kind: string;
  metadata: { name: string };
  spec: Route["filter"] & { subscriber: { ref: { name: string } }; delivery?: Route["delivery"] };
}

/** @param urls the local URL of each subscriber, by Knative Service name */
export function routesFromTriggers(urls: Record<string, string>, file = TRIGGERS_FILE): Route[] {
  return (readObjects(file) as unknown as Trigger[])
    .filter((t) => t.kind === "Trigger")
    .map((t) => {
      const url = urls[t.spec.subscriber.ref.name];
      if (!url) throw new Error(`Trigger ${t.metadata.name}: no local URL for subscriber ${t.spec.subscriber.ref.name}`);
      const { filter, filters, delivery } = t.spec;
      return { trigger: t.metadata.name, filter: { ...(filter ? { filter } : {}), ...(filters ? { filters } : {}) }, url, delivery: delivery ?? {} };
    });
}
