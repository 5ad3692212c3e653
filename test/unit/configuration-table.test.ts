// The README's Configuration table, checked row by row against the code that parses the
// variables and the manifests that set them: the default, the range and the Services named.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { maxEventBytes } from "../../functions/runtime/body-limit.ts";
import { CONFIG_VARIABLES, SOURCE_VARIABLES, parseConfig, parseSourceConfig } from "../../shared/config.ts";
import { configurationTable } from "../docs-text.ts";

const rows = configurationTable();
const row = (variable: string) => {
  const r = rows.find((x) => x.variable === variable);
  if (!r) throw new Error(`the Configuration table has no row for ${variable}`);
  return r;
};
const manifests = (file: string) => parseAllDocuments(readFileSync(new URL(`../../knative/${file}`, import.meta.url), "utf8")).map((d) => d.toJS());
/** The Knative Services and the source's Deployment, by what the table calls them. */
const services = [
  ...manifests("services.yaml").filter((d) => d?.kind === "Service"),
  ...manifests("source.yaml").filter((d) => d?.kind === "Deployment").map((d) => ({ ...d, metadata: { name: "source" } })),
] as { metadata: { name: string }; spec: { template: { spec: { containers: { env: { name: string; value: string }[] }[] } } } }[];
/** What knative/services.yaml sets the variable to, by function. */
const setIn = (variable: string) =>
  Object.fromEntries(
    services.flatMap((s) => s.spec.template.spec.containers[0]!.env.filter((e) => e.name === variable).map((e) => [s.metadata.name.replace(/^poolrelay-/, ""), e.value])),
  );

/** Parses one variable as its function (or the source) does; throws as it would at start-up. */
const SINK = { K_SINK: "http://broker-ingress.knative-eventing.svc.cluster.local/dynamo-system/dynamo-pool-relay" };
const parse = (variable: string, value: string) =>
  variable === "MAX_EVENT_BYTES" ? maxEventBytes({ [variable]: value }) : SOURCE_VARIABLES.includes(variable) ? parseSourceConfig({ ...SINK, [variable]: value }) : parseConfig({ [variable]: value });
const parsed = (variable: string) => (variable === "MAX_EVENT_BYTES" ? maxEventBytes({}) : SOURCE_VARIABLES.includes(variable) ? parseSourceConfig(SINK) : parseConfig({}));
/** The default as the table gives it: the cell's first code span. */
const documentedDefault = (variable: string) => /^`([^`]+)`/.exec(row(variable).default)?.[1];

describe("the README's Configuration table", () => {
  it("documents every variable the functions parse", () => {
    expect(CONFIG_VARIABLES.length).toBeGreaterThan(5);
    for (const v of [...CONFIG_VARIABLES, "MAX_EVENT_BYTES"]) expect(rows.map((r) => r.variable)).toContain(v);
  });

  it.each([...CONFIG_VARIABLES, "MAX_EVENT_BYTES"].filter((v) => documentedDefault(v) !== undefined))("%s: the documented default is the one the code falls back to", (variable) => {
    const value = documentedDefault(variable)!;
    expect(parse(variable, value)).toEqual(parsed(variable));
  });

  it.each(rows.filter((r) => / to /.test(r.range)).map((r) => [r.variable, r.range]))("%s: the documented range %s is the one the code accepts", (variable, range) => {
    const [, low, high] = /^([\d.]+) to ([\d.]+)/.exec(range)!;
    expect(() => parse(variable, low!)).not.toThrow();
    expect(() => parse(variable, high!)).not.toThrow();
    expect(() => parse(variable, String(Number(low) - 1))).toThrow(variable);
    expect(() => parse(variable, String(Number(high) + 1))).toThrow(variable);
  });

  it.each(rows.filter((r) => /^`[^`]+`(, `[^`]+`)+/.test(r.range)).map((r) => [r.variable, r.range]))("%s: takes exactly the values %s", (variable, range) => {
    const listed = /^`[^`]+`(?:, `[^`]+`)*/.exec(range)![0];
    const values = [...listed.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    for (const v of values) expect(() => parse(variable, v)).not.toThrow();
    expect(() => parse(variable, "something-else")).toThrow(variable);
  });

  it.each(rows.filter((r) => r.default.includes("`knative/` sets")).map((r) => [r.variable, r.default]))("%s: what knative/ sets is what the table says (%s)", (variable, cell) => {
    const said = /`knative\/` sets ([^)]*)\)/.exec(cell)![1]!;
    const set = setIn(variable);
    const perFunction = [...said.matchAll(/([a-z-]+) (\d+)/g)];
    if (perFunction.length > 0) expect(set).toEqual(Object.fromEntries(perFunction.map((m) => [m[1], m[2]])));
    else {
      expect(Object.keys(set).length).toBeGreaterThan(0);
      for (const value of Object.values(set)) expect(value).toBe(said);
    }
  });

  it.each(rows.map((r) => [r.variable, r.setOn]))("%s: every Service that sets it is named in the table (%s)", (variable, setOn) => {
    for (const fn of Object.keys(setIn(variable))) {
      if (!setOn.startsWith("every function")) expect(setOn).toContain(fn);
    }
  });
});
