import { describe, expect, it } from "vitest";
import { MAX_SOURCES, goEscape, sourcesDocument } from "./sources-document.ts";

// Expected texts and revisions were computed independently (Python: json.dumps with compact
// separators, UTF-8 byte sort, the five Go escapes, hashlib.sha256), not by this code.
const vectors = [
  {
    name: "an empty list",
    namespaces: [],
    rev: undefined,
    text: '{"version":1,"sources":[]}',
    revision: "b6e0bb87bd5035885d74e6e0a9345b7baad41e7ecfd1a03f366f11483213bd6e",
  },
  {
    name: "one namespace without a connection revision",
    namespaces: ["production-llama"],
    rev: undefined,
    text: '{"version":1,"sources":[{"namespace":"production-llama"}]}',
    revision: "3307befb97e430d77a659b6b6c0504e0817c6b8d25685754f1bcda4dd13b0544",
  },
  {
    name: "namespaces sorted byte-wise, upper case first",
    namespaces: ["b-ns", "a-ns", "A-ns"],
    rev: "rev-1",
    text: '{"version":1,"connectionRevision":"rev-1","sources":[{"namespace":"A-ns"},{"namespace":"a-ns"},{"namespace":"b-ns"}]}',
    revision: "499da556e75c6c3669e47c30eecf24cc6e7a50e8a7537ae67f3d242fffeda4bc",
  },
  {
    name: "the five Go escapes",
    namespaces: ["ns"],
    rev: "a&b<c>d\u2028e\u2029f",
    text: '{"version":1,"connectionRevision":"a\\u0026b\\u003cc\\u003ed\\u2028e\\u2029f","sources":[{"namespace":"ns"}]}',
    revision: "06162249ea09e6e731b6d43b9a60bd8805ee3841c386776c1822478d0e83fff5",
  },
  {
    name: "quote, backslash and control escapes",
    namespaces: ['ns"q', "back\\slash", "tab\there"],
    rev: "nl\nx",
    text: '{"version":1,"connectionRevision":"nl\\nx","sources":[{"namespace":"back\\\\slash"},{"namespace":"ns\\"q"},{"namespace":"tab\\there"}]}',
    revision: "71e923b6be81f09c1234311a542237acf6f9f353fa7127e54abbd9223f0487c1",
  },
  {
    name: "a namespace of exactly 512 bytes (256 two-byte characters)",
    namespaces: ["é".repeat(256)],
    rev: undefined,
    text: `{"version":1,"sources":[{"namespace":"${"é".repeat(256)}"}]}`,
    revision: "1127263ba01ee7df21ccaa97fa9f980e44fc157627863067eab07603fd4145d4",
  },
  {
    name: "U+FF5E before U+1F600 (UTF-8 order; UTF-16 order is the reverse)",
    namespaces: ["\u{1F600}", "\uff5e", "z"],
    rev: undefined,
    text: '{"version":1,"sources":[{"namespace":"z"},{"namespace":"\uff5e"},{"namespace":"\u{1F600}"}]}',
    revision: "874a5bec23556cf357fd33c269778d6a3a1b086999f60d4d73aad56a7a677d1b",
  },
];

describe("sourcesDocument", () => {
  it.each(vectors)("writes the canonical form and revision for $name", ({ namespaces, rev, text, revision }) => {
    const result = sourcesDocument(namespaces, rev);
    expect(result).toEqual({ ok: true, document: { text, revision } });
  });

  it("does not depend on input order", () => {
    const a = sourcesDocument(["x", "b", "m"], "r");
    const b = sourcesDocument(["m", "x", "b"], "r");
    expect(a).toEqual(b);
  });

  const invalid = [
    {
      name: "more sources than the Relay accepts",
      namespaces: Array.from({ length: MAX_SOURCES + 1 }, (_, i) => `ns-${i}`),
      rev: "r",
      message: /4097 worker namespaces exceed the Relay's limit of 4096/,
    },
    { name: "a duplicate namespace", namespaces: ["a", "b", "a"], rev: "r", message: /"a" is listed twice/ },
    { name: "an empty namespace", namespaces: [""], rev: "r", message: /worker namespace is empty/ },
    { name: "surrounding whitespace", namespaces: [" a"], rev: "r", message: /surrounding whitespace/ },
    { name: "a namespace over 512 bytes", namespaces: ["é".repeat(257)], rev: "r", message: /longer than 512 bytes/ },
    {
      name: "a namespace of 513 bytes",
      namespaces: ["a", `${"é".repeat(256)}n`],
      rev: "r",
      message: /^worker namespace is longer than 512 bytes$/,
    },
    {
      name: "a connection revision of 513 bytes",
      namespaces: ["a"],
      rev: "r".repeat(513),
      message: /^connectionRevision is longer than 512 bytes$/,
    },
    { name: "a lone surrogate", namespaces: ["a\ud800"], rev: "r", message: /unpaired surrogate/ },
    { name: "an empty connection revision", namespaces: ["a"], rev: "", message: /connectionRevision is empty/ },
    {
      name: "a document over 1 MiB",
      namespaces: Array.from({ length: 4096 }, (_, i) => `${i}-${"n".repeat(300)}`),
      rev: "r",
      message: /over the Relay's limit of 1048576/,
    },
  ];
  it.each(invalid)("rejects $name", ({ namespaces, rev, message }) => {
    const result = sourcesDocument(namespaces, rev);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toMatch(message);
  });
});

describe("sourcesDocument at the Relay's document limit", () => {
  // 2048 distinct namespaces of 494 or 495 bytes: the canonical text is exactly 1 MiB.
  const names = Array.from(
    { length: 2048 },
    (_, i) => `${String(i).padStart(4, "0")}${"n".repeat(i < 25 ? 490 : 491)}`,
  );
  const text = `{"version":1,"sources":[${names.map((n) => `{"namespace":"${n}"}`).join(",")}]}`;

  it("writes a document of exactly 1048576 bytes", () => {
    expect(Buffer.byteLength(text, "utf8")).toBe(1048576);
    expect(sourcesDocument(names, undefined)).toEqual({
      ok: true,
      document: { text, revision: "7fed792feef565e7ce50786bee4731f0664149f561eac4400f52eeca5bcad40e" },
    });
  });

  it("refuses one byte more", () => {
    expect(sourcesDocument([...names.slice(0, -1), `${names.at(-1)}n`], undefined)).toEqual({
      ok: false,
      message: "the sources document is 1048577 bytes, over the Relay's limit of 1048576",
    });
  });
});

describe("goEscape", () => {
  it("escapes exactly &, <, >, U+2028 and U+2029", () => {
    expect(goEscape('&<>\u2028\u2029é"')).toBe('\\u0026\\u003c\\u003e\\u2028\\u2029é"');
  });
});
