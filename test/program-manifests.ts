/**
 * knative/ as each program gets its environment: the env its manifest writes, the settings it
 * takes with envFrom (knative/settings.env, the ConfigMap kustomization.yaml generates from it),
 * K_SINK from a SinkBinding naming it, and PORT, which Knative Serving sets in every Service.
 */
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { PROGRAMS, type Program } from "../shared/config.ts";

const read = (f: string) => readFileSync(new URL(`../knative/${f}`, import.meta.url), "utf8");
const docs = (f: string) =>
  parseAllDocuments(read(f))
    .map((d) => d.toJS() as Manifest | null)
    .filter((d): d is Manifest => Boolean(d));
export const SETTINGS_CONFIGMAP = "poolrelay-settings";

interface Manifest {
  kind: string;
  metadata: { name: string };
  spec: {
    subject?: { kind: string; name: string };
    template: {
      spec: {
        containers: {
          env?: { name: string; value?: string; valueFrom?: unknown }[];
          envFrom?: { configMapRef?: { name: string } }[];
        }[];
      };
    };
  };
}

/** knative/settings.env as kustomize's env-file reader takes it: KEY=VALUE lines, # comments. */
export function parseEnvFile(text: string): Record<string, string> {
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  return Object.fromEntries(
    lines.map((l) => {
      const eq = l.indexOf("=");
      if (eq < 1) throw new Error(`settings.env: not KEY=VALUE: ${l}`);
      return [l.slice(0, eq), l.slice(eq + 1)];
    }),
  );
}

export const settingsFile = (): Record<string, string> => parseEnvFile(read("settings.env"));

export interface ProgramEnv {
  program: Program;
  kind: "Service" | "Deployment";
  /** The manifest's own env: a value, or "(from the pod)" for a fieldRef. */
  env: Record<string, string>;
  /** The ConfigMaps it takes whole. */
  envFrom: string[];
  /** Set by something else: K_SINK by a SinkBinding, PORT by Knative Serving. */
  injected: string[];
}

/** Every program's manifest, as written in knative/. */
export function programManifests(): ProgramEnv[] {
  const bindings = [...docs("pingsource.yaml"), ...docs("services.yaml"), ...docs("source.yaml")]
    .filter((d) => d.kind === "SinkBinding")
    .map((d) => d.spec.subject!.name);
  const functions = docs("services.yaml")
    .filter((d) => d.kind === "Service")
    .map((d) => ({ d, program: d.metadata.name.replace(/^poolrelay-/, ""), kind: "Service" as const }));
  const source = docs("source.yaml")
    .filter((d) => d.kind === "Deployment")
    .map((d) => ({ d, program: "source", kind: "Deployment" as const }));
  return [...functions, ...source].map(({ d, program, kind }) => {
    if (!(PROGRAMS as readonly string[]).includes(program))
      throw new Error(`knative/ runs ${program}, which shared/config.ts does not name`);
    const container = d.spec.template.spec.containers[0]!;
    return {
      program: program as Program,
      kind,
      env: Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value ?? "(from the pod)"])),
      envFrom: (container.envFrom ?? []).flatMap((e) => (e.configMapRef ? [e.configMapRef.name] : [])),
      injected: [...(bindings.includes(d.metadata.name) ? ["K_SINK"] : []), ...(kind === "Service" ? ["PORT"] : [])],
    };
  });
}

/** What the program's container sees: the settings, then its own env over them (as the kubelet does). */
export function environmentOf(p: ProgramEnv, settings = settingsFile()): Record<string, string> {
  return { ...(p.envFrom.includes(SETTINGS_CONFIGMAP) ? settings : {}), ...p.env };
}

/** Each variable a program reads that its manifest does not give it, as "program: VARIABLE". */
export function notGiven(programs: ProgramEnv[], reads: (p: Program) => string[], settings = settingsFile()): string[] {
  return programs.flatMap((p) => {
    const given = new Set([...Object.keys(environmentOf(p, settings)), ...p.injected]);
    return reads(p.program)
      .filter((v) => !given.has(v))
      .map((v) => `${p.program}: ${v}`);
  });
}

/**
 * Each setting written more than once: the same value in two programs' env (it belongs in
 * settings.env), or a program's env over settings.env (the one place would not be the one).
 */
export function writtenTwice(programs: ProgramEnv[], settings = settingsFile()): string[] {
  const out: string[] = [];
  const byValue = new Map<string, string[]>();
  for (const p of programs) {
    for (const [name, value] of Object.entries(p.env)) {
      if (name in settings) out.push(`${p.program}: ${name} over settings.env`);
      if (value === "(from the pod)") continue;
      const key = `${name}=${value}`;
      byValue.set(key, [...(byValue.get(key) ?? []), p.program]);
    }
  }
  for (const [key, where] of byValue) if (where.length > 1) out.push(`${key} in ${where.join(", ")}`);
  return out;
}
