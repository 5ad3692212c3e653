import { describe, expect, it } from "vitest";
import { compareResourceVersions } from "./resource-version.ts";

describe("compareResourceVersions", () => {
  it.each([
    { a: "41", b: "42", expected: -1 },
    { a: "42", b: "41", expected: 1 },
    { a: "42", b: "42", expected: 0 },
    { a: "999", b: "1000", expected: -1 },
    { a: "1000", b: "999", expected: 1 },
    { a: "18446744073709551617", b: "18446744073709551616", expected: 1 },
    { a: "9", b: "10", expected: -1 },
  ])("compares $a with $b as numbers: $expected", ({ a, b, expected }) => {
    expect(compareResourceVersions(a, b)).toBe(expected);
  });

  it.each([
    { name: "a leading zero", a: "042", b: "41" },
    { name: "zero, the watch's special value", a: "0", b: "41" },
    { name: "a sign", a: "-1", b: "41" },
    { name: "not a number", a: "abc", b: "41" },
    { name: "empty", a: "", b: "41" },
    { name: "absent", a: undefined, b: "41" },
    { name: "a number, not a string", a: 40, b: "41" },
    { name: "the other side malformed", a: "41", b: "4x" },
  ])("is not comparable with $name", ({ a, b }) => {
    expect(compareResourceVersions(a, b)).toBeUndefined();
  });
});
