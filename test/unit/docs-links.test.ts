// Every relative link of the README and docs/ points at a file that exists and, with an anchor,
// at a heading of that file, as GitHub names it: so moving a section breaks a test, not a reader.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { docFiles } from "../docs-text.ts";

const root = new URL("../../", import.meta.url).pathname;

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

const anchorsOf = (markdown: string) =>
  new Set(
    markdown
      .replace(/```[\s\S]*?```/g, "")
      .split("\n")
      .filter((l) => /^#{1,6} /.test(l))
      .map((l) => slug(l.replace(/^#+ /, ""))),
  );

const links = Object.entries(docFiles()).flatMap(([file, text]) =>
  [...text.replace(/```[\s\S]*?```/g, "").matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z]+:/.test(target))
    .map((target) => ({ file, target })),
);

describe("links of the README and docs/", () => {
  it("names headings as GitHub does", () => {
    expect(slug("`npm run bench:pipeline`: 1,000 new pairs at once")).toBe(
      "npm-run-benchpipeline-1000-new-pairs-at-once",
    );
    expect(slug("The rules, in plain words")).toBe("the-rules-in-plain-words");
  });

  it("finds links to check", () => {
    expect(links.length).toBeGreaterThan(20);
  });

  it.each(links.map((l) => [l.file, l.target]))("%s → %s resolves", (file, target) => {
    const [path, anchor] = target.split("#") as [string, string | undefined];
    const resolved = path === "" ? file : normalize(join(dirname(file), path));
    expect(existsSync(join(root, resolved)), `${resolved} exists`).toBe(true);
    if (anchor !== undefined) expect([...anchorsOf(readFileSync(join(root, resolved), "utf8"))]).toContain(anchor);
  });
});

// A test the docs cite as `file` › "title" exists under that title: a doc that says which test fails
// without a rule must name one that is there. "…" stands for words left out.
const citations = Object.entries(docFiles()).flatMap(([doc, text]) =>
  [...text.replace(/\s*\n\s*/g, " ").matchAll(/`([\w./-]+\.test\.ts)` › ((?:"[^"]+"(?:,? (?:and )?)?)+)/g)].flatMap(
    (m) => [...m[2]!.matchAll(/"([^"]+)"/g)].map((t) => ({ doc, file: m[1]!, title: t[1]! })),
  ),
);

describe("tests the docs cite", () => {
  it("finds citations to check", () => {
    expect(citations.length).toBeGreaterThan(20);
  });

  it.each(citations.map((c) => [c.doc, c.file, c.title]))("%s cites %s › %s", (_doc, file, title) => {
    const source = readFileSync(join(root, file), "utf8").replace(/\s*\n\s*/g, " ");
    for (const words of title
      .split("…")
      .map((w) => w.trim())
      .filter(Boolean))
      expect(source).toContain(words);
  });
});

// Code the docs name as `identifier` in `file.ts` is there: a rename must take its docs along.
const namedCode = Object.entries(docFiles()).flatMap(([doc, text]) =>
  [...text.replace(/\s*\n\s*/g, " ").matchAll(/`([A-Za-z_][\w.]*)`(?: \([^)]*\))? in `([\w./-]+\.ts)`/g)].map((m) => ({
    doc,
    name: m[1]!,
    file: m[2]!,
  })),
);
const namedFiles = Object.entries(docFiles()).flatMap(([doc, text]) =>
  [...text.matchAll(/`((?:shared|functions|test|bench|cli|dev|scripts|knative)\/[\w./-]+\.(?:ts|yaml|md))`/g)].map(
    (m) => ({ doc, file: m[1]! }),
  ),
);

describe("code the docs name", () => {
  it("finds names and files to check", () => {
    expect(namedCode.length).toBeGreaterThan(20);
    expect(namedFiles.length).toBeGreaterThan(20);
  });

  it.each(namedCode.map((c) => [c.doc, c.name, c.file]))("%s: `%s` in %s", (_doc, name, file) => {
    expect(existsSync(join(root, file)), `${file} exists`).toBe(true);
    expect(readFileSync(join(root, file), "utf8")).toContain(name.split(".").pop()!);
  });

  it.each(namedFiles.map((c) => [c.doc, c.file]))("%s names %s, which exists", (_doc, file) => {
    expect(existsSync(join(root, file))).toBe(true);
  });
});
