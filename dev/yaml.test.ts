import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readObjects } from "./yaml.ts";

const dir = mkdtempSync(join(tmpdir(), "dev-yaml-"));

describe("readObjects", () => {
  it.each([
    {
      name: "an unclosed flow map",
      text: "kind: ConfigMap\ndata: {\n  a: b\n",
      at: ":4:1: ",
      message: /Flow map .*end with a }/,
    },
    {
      name: "an unclosed flow sequence",
      text: "kind: Role\nrules: [\n",
      at: ":3:1: ",
      message: /Flow sequence .*end with a ]/,
    },
    {
      name: "an error in a later document, counted from the top of the file",
      text: "kind: Namespace\n---\nkind: Service\nmetadata: {name: a\n",
      at: ":5:1: ",
      message: /Flow map/,
    },
    {
      name: "a duplicate key, whose value would otherwise be chosen silently",
      text: "kind: Service\nspec: {}\nspec: {type: ClusterIP}\n",
      at: ":3:1: ",
      message: /Map keys must be unique/,
    },
  ])("fails on $name, naming the file, line and column", ({ name, text, at, message }) => {
    const file = join(dir, `${name.replaceAll(" ", "-")}.yaml`);
    writeFileSync(file, text);
    expect(() => readObjects(file)).toThrow(`${file}${at}`);
    expect(() => readObjects(file)).toThrow(message);
  });
});
