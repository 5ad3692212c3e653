/**
 * Kubernetes label selectors (metav1.LabelSelector), judged as the API server judges them: the
 * syntax of keys and values, which labels a selector matches, and the query string a LIST takes. A
 * DynamoPoolRelay's `spec.dgdSelector` picks its DGDs with one (its schema, which refuses an invalid
 * one: ./api/label-selector.ts); the core matches in memory what the API server would select, so
 * the source and the functions agree on the same set.
 */

export type Operator = "In" | "NotIn" | "Exists" | "DoesNotExist";

export interface Requirement {
  key: string;
  operator: Operator;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Requirement[];
}

/** A label key: an optional DNS-1123 subdomain and `/`, then a name of 1-63 characters. */
export const LABEL_KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
/** A label value: empty, or 1-63 characters starting and ending with a letter or digit. */
export const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;

/**
 * Does a valid selector match these labels? Every matchLabels pair and every requirement must
 * hold; an empty selector matches everything, as metav1.LabelSelectorAsSelector makes it.
 */
export function selectorMatches(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  const has = (k: string) => Object.hasOwn(l, k);
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (!has(k) || l[k] !== v) return false;
  for (const r of selector.matchExpressions ?? []) {
    const values = r.values ?? [];
    const ok =
      r.operator === "In"
        ? has(r.key) && values.includes(l[r.key]!)
        : r.operator === "NotIn"
          ? !has(r.key) || !values.includes(l[r.key]!)
          : r.operator === "Exists"
            ? has(r.key)
            : !has(r.key);
    if (!ok) return false;
  }
  return true;
}

/** The `labelSelector` query parameter selecting what `selector` matches; "" for everything. */
export function selectorQuery(selector: LabelSelector): string {
  const parts = Object.entries(selector.matchLabels ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`);
  for (const r of selector.matchExpressions ?? []) {
    const values = [...(r.values ?? [])].sort().join(",");
    parts.push(
      r.operator === "In"
        ? `${r.key} in (${values})`
        : r.operator === "NotIn"
          ? `${r.key} notin (${values})`
          : r.operator === "Exists"
            ? r.key
            : `!${r.key}`,
    );
  }
  return parts.join(",");
}
