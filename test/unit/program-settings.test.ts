// Every setting a program reads is given by its manifest, and each shared one is written once:
// knative/settings.env, which every program takes with envFrom.
import { describe, expect, it } from "vitest";
import { PROGRAMS, parseConfig, parseSourceConfig, variablesRead } from "../../shared/config.ts";
import {
  environmentOf,
  notGiven,
  parseEnvFile,
  programManifests,
  SETTINGS_CONFIGMAP,
  settingsFile,
  writtenTwice,
  type ProgramEnv,
} from "../program-manifests.ts";

const programs = programManifests();
const withoutEnv = (p: ProgramEnv, name: string): ProgramEnv => ({
  ...p,
  env: Object.fromEntries(Object.entries(p.env).filter(([k]) => k !== name)),
});

describe("each program's settings", () => {
  it("knative/ runs every program shared/config.ts names, once", () => {
    expect(programs.map((p) => p.program).sort()).toEqual([...PROGRAMS].sort());
  });

  it("every program's manifest gives every variable it reads", () => {
    expect(variablesRead("source")).toContain("DGD_API_VERSION");
    expect(notGiven(programs, variablesRead)).toEqual([]);
  });

  it("finds a variable a program reads and is not given (the check can fail)", () => {
    const cut = programs.map((p) =>
      p.program === "source" ? { ...p, envFrom: [] } : p.program === "status" ? withoutEnv(p, "STATUS_BATCH_MS") : p,
    );
    expect(notGiven(cut, variablesRead)).toEqual(
      expect.arrayContaining([
        "status: STATUS_BATCH_MS",
        "source: DGD_API_VERSION",
        "source: DEFAULT_DISCOVERY_BACKEND",
        "source: RELAY_COMMAND",
      ]),
    );
  });

  it("every program takes the settings ConfigMap whole", () => {
    for (const p of programs) expect(p.envFrom).toEqual([SETTINGS_CONFIGMAP]);
  });

  it("writes no setting twice: a value shared by programs is in settings.env alone", () => {
    expect(Object.keys(settingsFile())).toEqual(
      expect.arrayContaining(["DEFAULT_DISCOVERY_BACKEND", "DGD_API_VERSION", "RELAY_COMMAND"]),
    );
    expect(writtenTwice(programs)).toEqual([]);
  });

  it("finds a setting written twice (the check can fail)", () => {
    const copied = programs.map((p) =>
      p.program === "apply" || p.program === "status" ? { ...p, env: { ...p.env, STATUS_BATCH_MS: "7" } } : p,
    );
    const over = programs.map((p) =>
      p.program === "source" ? { ...p, env: { ...p.env, DGD_API_VERSION: "nvidia.com/v1alpha1" } } : p,
    );
    expect(writtenTwice(copied)).toEqual(["STATUS_BATCH_MS=7 in apply, status"]);
    expect(writtenTwice(over)).toEqual(["source: DGD_API_VERSION over settings.env"]);
  });

  it.each(programs.map((p) => [p.program, p]))("%s starts with what knative/ gives it", (_name, p) => {
    const env = {
      ...environmentOf(p),
      K_SINK: "http://broker-ingress.knative-eventing.svc.cluster.local/dynamo-system/dynamo-pool-relay",
    };
    if (p.program === "source")
      expect(parseSourceConfig({ ...env, POD_NAME: "poolrelay-source-0", POD_NAMESPACE: "dynamo-system" }).port).toBe(
        8080,
      );
    expect(parseConfig(env, p.program)).toBeDefined();
  });

  it("reads settings.env as kustomize does: KEY=VALUE lines, comments skipped, the value kept whole", () => {
    expect(parseEnvFile('# a comment\n\nA=b=c\nRELAY_COMMAND=["x","y"]\n')).toEqual({
      A: "b=c",
      RELAY_COMMAND: '["x","y"]',
    });
    expect(() => parseEnvFile("=x")).toThrow(/not KEY=VALUE/);
  });
});
