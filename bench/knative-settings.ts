// What knative/ installs, as the benches read it: the manifests' documents, and the resync's
// settings (the PingSource schedule, the eligibility Service's RESYNC_PERIOD_SECONDS and RESYNC_SLOTS).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { ticksPerHour } from "./idle-model.ts";

const knative = fileURLToPath(new URL("../knative/", import.meta.url));

export interface Doc {
  kind: string;
  metadata: { name: string };
  spec: {
    schedule?: string;
    template?: {
      metadata?: { annotations?: Record<string, string> };
      spec: {
        timeoutSeconds?: number;
        containers: { env?: { name: string; value?: string }[]; resources?: { limits?: { memory?: string } } }[];
      };
    };
  };
}

export const knativeDocs = (file: string): Doc[] =>
  parseAllDocuments(readFileSync(`${knative}${file}`, "utf8"))
    .map((d) => d.toJS() as Doc)
    .filter(Boolean);

export function resyncSettings(): { schedule: string; ticksPerHour: number; periodSeconds: number; slots: number } {
  const schedule = knativeDocs("pingsource.yaml").find((d) => d.kind === "PingSource")!.spec.schedule!;
  const env =
    knativeDocs("services.yaml").find((s) => s.metadata.name === "poolrelay-eligibility")!.spec.template!.spec
      .containers[0]!.env ?? [];
  const value = (name: string) => Number(env.find((e) => e.name === name)!.value);
  return {
    schedule,
    ticksPerHour: ticksPerHour(schedule),
    periodSeconds: value("RESYNC_PERIOD_SECONDS"),
    slots: value("RESYNC_SLOTS"),
  };
}
