/**
 * Kubernetes resource quantities compared by value: the API server stores them in its own form
 * ("1000m" comes back as "1", "1024Mi" as "1Gi", 2 as "2"), so text equality would see a change
 * that is none.
 */

const SUFFIX: Record<string, [bigint, bigint]> = {
  n: [1n, 1_000_000_000n],
  u: [1n, 1_000_000n],
  m: [1n, 1000n],
  "": [1n, 1n],
  k: [1000n, 1n],
  M: [10n ** 6n, 1n],
  G: [10n ** 9n, 1n],
  T: [10n ** 12n, 1n],
  P: [10n ** 15n, 1n],
  E: [10n ** 18n, 1n],
  Ki: [2n ** 10n, 1n],
  Mi: [2n ** 20n, 1n],
  Gi: [2n ** 30n, 1n],
  Ti: [2n ** 40n, 1n],
  Pi: [2n ** 50n, 1n],
  Ei: [2n ** 60n, 1n],
};
const QUANTITY = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?$/;

/** The exact value as a fraction, or undefined when the text is not a quantity. */
export function quantityValue(q: string | number): { num: bigint; den: bigint } | undefined {
  const m = QUANTITY.exec(String(q).trim());
  if (!m) return undefined;
  const [, sign, digits, exponent, suffix] = m;
  const [, fraction = ""] = digits!.split(".");
  const magnitude = BigInt(digits!.replace(".", ""));
  let num = sign === "-" ? -magnitude : magnitude;
  let den = 10n ** BigInt(fraction.length);
  if (exponent) {
    const e = Number(exponent.slice(1));
    if (e >= 0) num *= 10n ** BigInt(e);
    else den *= 10n ** BigInt(-e);
  } else {
    const [mul, div] = SUFFIX[suffix ?? ""]!;
    num *= mul;
    den *= div;
  }
  return { num, den };
}

export function sameQuantity(a: unknown, b: unknown): boolean {
  if ((typeof a !== "string" && typeof a !== "number") || (typeof b !== "string" && typeof b !== "number"))
    return false;
  const x = quantityValue(a);
  const y = quantityValue(b);
  return x !== undefined && y !== undefined && x.num * y.den === y.num * x.den;
}
