/**
 * Resource versions compared as Kubernetes defines it since v1.35 (KEP-5504, Comparable Resource
 * Versions; this product's control plane is v1.36): for objects of one resource, a resourceVersion
 * is a positive decimal integer without leading zeros, and the larger one is the newer. Anything
 * else (an aggregated API server's own scheme, an empty or absent value) is not comparable.
 */
const WELL_FORMED = /^[1-9][0-9]*$/;

/** -1, 0 or 1 as `a` is older than, the same as or newer than `b`; undefined when either is not comparable. */
export function compareResourceVersions(a: unknown, b: unknown): -1 | 0 | 1 | undefined {
  if (typeof a !== "string" || typeof b !== "string" || !WELL_FORMED.test(a) || !WELL_FORMED.test(b)) return undefined;
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a === b ? 0 : a < b ? -1 : 1;
}
