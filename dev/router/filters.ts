/**
 * Knative Trigger filters, evaluated as the Broker's filter does: `filter.attributes` (exact,
 * AND, "" means present) and the SubscriptionsAPI `filters` (exact, prefix, suffix, all, any,
 * not), where `filters` wins when both are set. CESQL is not evaluated: a Trigger using it is
 * refused rather than matched wrongly.
 */
import type { CloudEvent } from "../../shared/cloudevent.ts";

export type Filter =
  | { exact: Record<string, string> }
  | { prefix: Record<string, string> }
  | { suffix: Record<string, string> }
  | { all: Filter[] }
  | { any: Filter[] }
  | { not: Filter }
  | { cesql: string };

export interface TriggerFilter {
  filter?: { attributes?: Record<string, string> };
  filters?: Filter[];
}

/** Attributes and extensions in one flat map, as the Broker's filter sees them. */
export function attributesOf(event: CloudEvent): Record<string, string> {
  const { extensions, data: _data, ...core } = event;
  return { ...Object.fromEntries(Object.entries(core).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)])), ...extensions };
}

function each(map: Record<string, string>, test: (actual: string | undefined, expected: string) => boolean, attrs: Record<string, string>): boolean {
  return Object.entries(map).every(([k, v]) => test(attrs[k], v));
}

export function matchesFilter(f: Filter, attrs: Record<string, string>): boolean {
  if ("exact" in f) return each(f.exact, (a, e) => a === e, attrs);
  if ("prefix" in f) return each(f.prefix, (a, e) => a !== undefined && a.startsWith(e), attrs);
  if ("suffix" in f) return each(f.suffix, (a, e) => a !== undefined && a.endsWith(e), attrs);
  if ("all" in f) return f.all.every((g) => matchesFilter(g, attrs));
  if ("any" in f) return f.any.some((g) => matchesFilter(g, attrs));
  if ("not" in f) return !matchesFilter(f.not, attrs);
  throw new Error(`CESQL filters are not supported by the local router: ${f.cesql}`);
}

export function matchesTrigger(trigger: TriggerFilter, event: CloudEvent): boolean {
  const attrs = attributesOf(event);
  if (trigger.filters && trigger.filters.length > 0) return trigger.filters.every((f) => matchesFilter(f, attrs));
  const wanted = trigger.filter?.attributes ?? {};
  return Object.entries(wanted).every(([k, v]) => (v === "" ? attrs[k] !== undefined && attrs[k] !== "" : attrs[k] === v));
}
