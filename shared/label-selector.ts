/**
 * Kubernetes label selectors (metav1.LabelSelector), judged as the API server judges them: which
 * selectors are valid, which labels they match, and the query string a LIST takes. A
 * DynamoPoolRelay's `spec.dgdSelector` picks its DGDs with one; the core matches in memory what the
 * API server would select, so the source and the functions agree on the same set.
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

/** A label key: an optional DNS-1123 subdomain prefix (at most 253) and `/`, then a name of at most 63. */
const KEY_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const KEY_PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** A label value: empty, or at most 63 characters of the name's alphabet. */
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function keyProblem(key: string): string | undefined {
  const slash = key.indexOf("/");
  const [prefix, name] = slash < 0 ? [undefined, key] : [key.slice(0, slash), key.slice(slash + 1)];
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !KEY_PREFIX.test(prefix)))
    return `the label key "${key}" has a prefix that is not a DNS-1123 subdomain of at most 253 characters`;
  if (name.length === 0 || name.length > 63 || !KEY_NAME.test(name))
    return `the label key "${key}" must be a name of at most 63 characters (letters, digits, '-', '_' and '.', starting and ending with a letter or digit), with an optional DNS subdomain prefix and '/'`;
  return undefined;
}

function valueProblem(key: string, value: string): string | undefined {
  if (value.length > 63 || !VALUE.test(value))
    return `the value "${value}" of the label "${key}" must be at most 63 characters (letters, digits, '-', '_' and '.', starting and ending with a letter or digit), or empty`;
  return undefined;
}

/** Why the API server would refuse this selector, or undefined when it is valid. Paths are relative to the selector. */
export function selectorProblems(selector: LabelSelector): string[] {
  const problems: string[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    const p = keyProblem(key) ?? valueProblem(key, value);
    if (p) problems.push(`matchLabels: ${p}`);
  }
  (selector.matchExpressions ?? []).forEach((r, i) => {
    const at = `matchExpressions[${i}]`;
    const k = keyProblem(r.key);
    if (k) problems.push(`${at}: ${k}`);
    const values = r.values ?? [];
    if ((r.operator === "In" || r.operator === "NotIn") && values.length === 0)
      problems.push(`${at}: the operator ${r.operator} needs at least one value`);
    if ((r.operator === "Exists" || r.operator === "DoesNotExist") && values.length > 0)
      problems.push(`${at}: the operator ${r.operator} takes no values`);
    for (const v of values) {
      const p = valueProblem(r.key, v);
      if (p) problems.push(`${at}: ${p}`);
    }
  });
  return problems;
}

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
