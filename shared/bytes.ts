/**
 * Byte-wise (UTF-8) string order, the order Rust and Go sort strings in. JavaScript's default
 * order compares UTF-16 code units, which differs for characters above U+FFFF versus U+E000-U+FFFF.
 */
export function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/** True when the string holds an unpaired UTF-16 surrogate, which has no UTF-8 encoding. */
export function hasLoneSurrogate(s: string): boolean {
  return !s.isWellFormed();
}
