// The README's Configuration table, checked row by row against the code that parses the
// variables and the manifests that set them: the default, the range and the Services named.
import { describe, expect, it } from "vitest";
import { maxEventBytes } from "../../functions/runtime/body-limit.ts";
import {
  CONFIG_VARIABLES,
  PROGRAMS,
  SOURCE_VARIABLES,
  parseConfig,
  parseSourceConfig,
  variablesRead,
} from "../../shared/config.ts";
import { configurationTable } from "../docs-text.ts";
import { environmentOf, programManifests, settingsFile } from "../program-manifests.ts";

const rows = configurationTable();
const row = (variable: string) => {
  const r = rows.find((x) => x.variable === variable);
  if (!r) throw new Error(`the Configuration table has no row for ${variable}`);
  return r;
};
const programs = programManifests();
/** What knative/ gives the variable, by program: its own env or knative/settings.env. */
const setIn = (variable: string) =>
  Object.fromEntries(
    programs.flatMap((p) => {
      const value = environmentOf(p)[variable];
      return value === undefined ? [] : [[p.program, value]];
    }),
  );

/** Parses one variable as its function (or the source) does; throws as it would at start-up. */
const SINK = { K_SINK: "http://broker-ingress.knative-eventing.svc.cluster.local/dynamo-system/dynamo-pool-relay" };
const parse = (variable: string, value: string) =>
  variable === "MAX_EVENT_BYTES"
    ? maxEventBytes({ [variable]: value })
    : SOURCE_VARIABLES.includes(variable)
      ? parseSourceConfig({ ...SINK, [variable]: value })
      : parseConfig({ [variable]: value });
const parsed = (variable: string) =>
  variable === "MAX_EVENT_BYTES"
    ? maxEventBytes({})
    : SOURCE_VARIABLES.includes(variable)
      ? parseSourceConfig(SINK)
      : parseConfig({});
/** The default as the table gives it: the cell's first code span. */
const documentedDefault = (variable: string) => /^`([^`]+)`/.exec(row(variable).default)?.[1];

describe("the README's Configuration table", () => {
  it("documents every variable the functions parse", () => {
    expect(CONFIG_VARIABLES.length).toBeGreaterThan(5);
    for (const v of [...CONFIG_VARIABLES, "MAX_EVENT_BYTES"]) expect(rows.map((r) => r.variable)).toContain(v);
  });

  it.each([...CONFIG_VARIABLES, "MAX_EVENT_BYTES"].filter((v) => documentedDefault(v) !== undefined))(
    "%s: the documented default is the one the code falls back to",
    (variable) => {
      const value = documentedDefault(variable)!;
      expect(parse(variable, value)).toEqual(parsed(variable));
    },
  );

  it.each(rows.filter((r) => / to /.test(r.range)).map((r) => [r.variable, r.range]))(
    "%s: the documented range %s is the one the code accepts",
    (variable, range) => {
      const [, low, high] = /^([\d.]+) to ([\d.]+)/.exec(range)!;
      expect(() => parse(variable, low!)).not.toThrow();
      expect(() => parse(variable, high!)).not.toThrow();
      expect(() => parse(variable, String(Number(low) - 1))).toThrow(variable);
      expect(() => parse(variable, String(Number(high) + 1))).toThrow(variable);
    },
  );

  it.each(rows.filter((r) => /^`[^`]+`(, `[^`]+`)+/.test(r.range)).map((r) => [r.variable, r.range]))(
    "%s: takes exactly the values %s",
    (variable, range) => {
      const listed = /^`[^`]+`(?:, `[^`]+`)*/.exec(range)![0];
      const values = [...listed.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
      for (const v of values) expect(() => parse(variable, v)).not.toThrow();
      expect(() => parse(variable, "something-else")).toThrow(variable);
    },
  );

  it.each(rows.filter((r) => r.default.includes("`knative/` sets")).map((r) => [r.variable, r.default]))(
    "%s: what knative/ sets is what the table says (%s)",
    (variable, cell) => {
      const said = /`knative\/` sets ([^)]*)\)/.exec(cell)![1]!;
      const set = setIn(variable);
      const perFunction = [...said.matchAll(/([a-z-]+) (\d+)/g)];
      if (perFunction.length > 0) expect(set).toEqual(Object.fromEntries(perFunction.map((m) => [m[1], m[2]])));
      else {
        expect(Object.keys(set).length).toBeGreaterThan(0);
        for (const value of Object.values(set)) expect(value).toBe(said);
      }
    },
  );

  it.each(
    rows
      .filter((r) => CONFIG_VARIABLES.includes(r.variable) || r.variable === "MAX_EVENT_BYTES")
      .map((r) => [r.variable, r.setOn]),
  )("%s: the programs that read it are the ones the table names (%s)", (variable, setOn) => {
    const readers = PROGRAMS.filter((p) => variablesRead(p).includes(variable));
    expect(readers.length).toBeGreaterThan(0);
    const named = PROGRAMS.filter(
      (p) => (p !== "source" && setOn.includes("every function")) || new RegExp(`(^|[ :,])${p}(,|$)`).test(setOn),
    );
    expect(named).toEqual(readers);
  });

  it.each(rows.map((r) => [r.variable, r.setOn]))(
    "%s: the table says it is in knative/settings.env exactly when it is (%s)",
    (variable, setOn) => {
      expect(setOn.includes("`settings.env`")).toBe(variable in settingsFile());
    },
  );
});
