/**
 * The README and docs/ as the claim tests read them: what the documentation says is checked
 * against the code and the manifests, so a claim cannot drift from the behaviour unnoticed.
 */
import { readdirSync, readFileSync } from "node:fs";

const root = new URL("../", import.meta.url);
const read = (f: string) => readFileSync(new URL(f, root), "utf8");

/** Every documentation file, by path from the repository's root. */
export function docFiles(): Record<string, string> {
  const files: Record<string, string> = { "README.md": read("README.md") };
  for (const f of readdirSync(new URL("docs/", root))
    .filter((f) => f.endsWith(".md"))
    .sort())
    files[`docs/${f}`] = read(`docs/${f}`);
  return files;
}

/** The README and docs/ as one line of prose per paragraph: claims wrap across lines. */
export const DOCS_PROSE = Object.values(docFiles())
  .join("\n\n")
  .replace(/\s*\n\s*/g, " ");

/** The first match of a claim in the README or docs/; throws when no file says it any more. */
export function claim(re: RegExp): RegExpExecArray {
  const m = re.exec(DOCS_PROSE);
  if (!m) throw new Error(`neither the README nor docs/ says ${re}`);
  return m;
}

export interface ConfigurationRow {
  variable: string;
  default: string;
  range: string;
  setOn: string;
}

/** The README's Configuration table: one row per variable (a row may name several, as the proxies). */
export function configurationTable(): ConfigurationRow[] {
  const readme = read("README.md");
  const section = /^## Configuration\n([\s\S]*?)\n## /m.exec(readme);
  if (!section) throw new Error("the README has no Configuration section");
  const rows = section[1]!.split("\n").filter((l) => l.startsWith("| `"));
  return rows.flatMap((line) => {
    const [variables, dflt, range, setOn] = line.split(" | ").map((c) => c.replace(/^\| | \|$/g, ""));
    return [...variables!.matchAll(/`([A-Z_]+)`/g)].map((m) => ({
      variable: m[1]!,
      default: dflt!,
      range: range!,
      setOn: setOn!,
    }));
  });
}
