// npm run bench:idle: the pod-seconds an idle hour costs each function, computed (bench/idle-model.ts)
// from knative/services.yaml and the resync PingSource, next to what Knative's default stable
// window would cost, for no DynamoPoolRelay and for 1,000. Prints a Markdown table.
import { idleCost, periodicWakeChance, scaling, type IdleCost } from "./idle-model.ts";
import { knativeDocs, resyncSettings } from "./knative-settings.ts";

const services = knativeDocs("services.yaml").filter((d) => d.kind === "Service");
const { schedule, ticksPerHour: ticks, slots } = resyncSettings();
/** A wake-up's own work: one resync tick or reconcile takes well under this (see `npm run bench`). */
const BUSY_SECONDS = 1;

/** Wake-ups an idle hour brings each function: the tick, and the periodic reconciles it asks for. */
function wakes(name: string, objects: number): number {
  if (name === "poolrelay-eligibility") return ticks;
  if (name === "poolrelay-apply") return ticks * periodicWakeChance(objects, slots);
  // A periodic reconcile of a converged pair ends in apply: it reports nothing for status.
  return 0;
}

const range = (c: IdleCost) =>
  c.podSeconds[0] === c.podSeconds[1]
    ? `${Math.round(c.podSeconds[0])}`
    : `${Math.round(c.podSeconds[0])}–${Math.round(c.podSeconds[1])}`;
const rows: string[] = [];
const totals = { ours: [0, 0], defaults: [0, 0] };
for (const objects of [0, 1000]) {
  for (const s of services) {
    const annotations = s.spec.template?.metadata?.annotations ?? {};
    const n = wakes(s.metadata.name, objects);
    const ours = idleCost(scaling(annotations, s.spec.template?.spec?.timeoutSeconds), n, BUSY_SECONDS);
    const defaults = idleCost(scaling({}), n, BUSY_SECONDS);
    if (objects === 1000) {
      ours.podSeconds.forEach((v, i) => (totals.ours[i]! += v));
      defaults.podSeconds.forEach((v, i) => (totals.defaults[i]! += v));
    }
    rows.push(
      `| ${objects} | ${s.metadata.name.replace("poolrelay-", "")} | ${annotations["autoscaling.knative.dev/window"] ?? "60s (default)"} | ${n.toFixed(1)} | ${range(ours)} | ${range(defaults)} |`,
    );
  }
}
console.log(
  `resync: "${schedule}" (${ticks} ticks an hour), ${slots} slots; a wake-up busy ${BUSY_SECONDS} s; grace 0–30 s, drain 30 s or the Service's timeoutSeconds if shorter\n`,
);
console.log(
  "| DynamoPoolRelays | function | window | wake-ups per idle hour | pod-seconds per idle hour | with the default 60 s window |\n|---|---|---|---|---|---|",
);
console.log(rows.join("\n"));
console.log(
  `\n1,000 DynamoPoolRelays, all functions: ${totals.ours.map(Math.round).join("–")} pod-seconds an idle hour (default window: ${totals.defaults.map(Math.round).join("–")})`,
);
