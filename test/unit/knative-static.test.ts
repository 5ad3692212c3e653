// Rules the API server's dry-run cannot check in knative/ and the Dockerfile.
import { readFileSync } from "node:fs";
import { parseConfig } from "../../shared/config.ts";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { claim, configurationTable } from "../docs-text.ts";
import { settingsFile } from "../program-manifests.ts";

/** ISO-8601 durations as Knative writes them (PT0.5S, PT60S, PT1M), in milliseconds. */
function durationMs(iso: string): number {
  const m = /^PT(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?$/.exec(iso);
  if (!m) throw new Error(`not a duration this test reads: ${iso}`);
  return Math.round((Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0)) * 1000);
}

// What these tests read of each manifest in knative/, as parsed YAML.
interface Manifest {
  kind: string;
}
type Container = {
  env: { name: string; value: string }[];
  readinessProbe?: Record<string, unknown>;
  livenessProbe?: unknown;
  securityContext: Record<string, unknown>;
};
interface KnativeService extends Manifest {
  kind: "Service";
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    template: {
      metadata: { annotations: Record<string, string> };
      spec: { containerConcurrency: number; timeoutSeconds: number; containers: Container[] };
    };
  };
}
interface Trigger extends Manifest {
  kind: "Trigger";
  metadata: { name: string };
  spec: { subscriber: { ref: { name: string } }; delivery: { timeout: string } };
}
interface PingSource extends Manifest {
  kind: "PingSource";
  spec: { schedule: string };
}
interface ApiServerSource extends Manifest {
  kind: "ApiServerSource";
  spec: { resources: { kind: string; apiVersion: string }[] };
}
interface Kustomization extends Manifest {
  replacements: unknown;
}

const read = (f: string) => readFileSync(new URL(`../../${f}`, import.meta.url), "utf8");
const docs = (f: string) =>
  parseAllDocuments(read(f))
    .map((d) => d.toJS() as Manifest | null)
    .filter((d): d is Manifest => Boolean(d));
const ofKind = <T extends Manifest>(f: string, kind: T["kind"]) => docs(f).filter((d): d is T => d.kind === kind);
const services = ofKind<KnativeService>("knative/services.yaml", "Service");
const triggers = ofKind<Trigger>("knative/triggers.yaml", "Trigger");

describe("knative/ and the Dockerfile", () => {
  it.each(triggers.map((t) => [t.metadata.name, t] as const))(
    "%s: the Service's timeout is below the Trigger's per-attempt timeout",
    (_name, trigger) => {
      const service = services.find((s) => s.metadata.name === trigger.spec.subscriber.ref.name);
      expect(service!.spec.template.spec.timeoutSeconds * 1000).toBeLessThan(durationMs(trigger.spec.delivery.timeout));
    },
  );

  it.each(services.map((s) => [s.metadata.name, s] as const))(
    "%s: each invocation's deadline ends before the Service's timeout",
    (_name, service) => {
      const env = Object.fromEntries(
        service.spec.template.spec.containers[0]!.env.map((e: { name: string; value: string }) => [e.name, e.value]),
      );
      expect(env["INVOCATION_DEADLINE_SECONDS"]).toMatch(/^\d+$/);
      // Room for the reply to travel back and for a cold start the timeout also covers.
      expect(Number(env["INVOCATION_DEADLINE_SECONDS"])).toBeLessThanOrEqual(
        service.spec.template.spec.timeoutSeconds * 0.85,
      );
    },
  );

  it("runs as a numeric user, so the kubelet can verify runAsNonRoot", () => {
    expect(read("Dockerfile")).toMatch(/^USER \d+(:\d+)?$/m);
    for (const s of services) expect(s.spec.template.spec.containers[0]!.securityContext.runAsNonRoot).toBe(true);
  });

  it("points every Service at a bundle the Dockerfile copies, for its FUNCTION_TARGET", () => {
    expect(read("Dockerfile")).toMatch(/COPY --from=build \/src\/dist\/functions \.\/functions/);
    for (const s of services) {
      const env = Object.fromEntries(
        s.spec.template.spec.containers[0]!.env.map((e: { name: string; value: string }) => [e.name, e.value]),
      );
      expect(env["FUNCTION_SOURCE"]).toBe(`/app/functions/${env["FUNCTION_TARGET"]}/index.mjs`);
      expect(s.metadata.name).toBe(`poolrelay-${env["FUNCTION_TARGET"]}`);
    }
  });

  it("fills the code cache the functions start from at the image's own paths and as its user: after the copy and the USER line", () => {
    // Node keeps the cache per user: filled as root, it would not be the node user's.
    const lines = read("Dockerfile").split("\n");
    const copied = lines.findIndex((l) => l.startsWith("COPY --from=build /src/dist/functions ./functions"));
    const user = lines.findIndex((l) => l.startsWith("USER "));
    const filled = lines.findIndex((l) => l === 'RUN ["node", "functions/fill-compile-cache.mjs"]');
    expect(copied).toBeGreaterThan(0);
    expect(user).toBeGreaterThan(copied);
    expect(filled).toBeGreaterThan(user);
  });

  it("starts every function through the entry point with the body limit", () => {
    // The framework's own main.js would serve without the limit.
    expect(read("Dockerfile")).toMatch(/^CMD \["node", "functions\/main\.mjs"\]$/m);
  });
});

// What docs/install.md, docs/contract.md ("Answers") and the README's Configuration table say
// of the Knative Services, the Triggers and the resync PingSource, read from those files and checked
// on the manifests as parsed YAML.
describe("knative/ as the docs describe it", () => {
  const service = (fn: string) => {
    const s = services.find((x) => x.metadata.name === `poolrelay-${fn}`);
    if (!s) throw new Error(`no Knative Service poolrelay-${fn}`);
    return s;
  };
  const container = (s: { spec: { template: { spec: { containers: Container[] } } } }) =>
    s.spec.template.spec.containers[0]!;
  const envOf = (s: Parameters<typeof container>[0]) =>
    Object.fromEntries(container(s).env.map((e) => [e.name, e.value]));
  const trigger = (fn: string) => triggers.find((t) => t.spec.subscriber.ref.name === `poolrelay-${fn}`);
  const FUNCTIONS = ["eligibility", "apply", "status"];

  it("has one Knative Service per function plus the dead-letter function", () => {
    expect(services.map((s) => s.metadata.name).sort()).toEqual([
      "poolrelay-apply",
      "poolrelay-dead-letter",
      "poolrelay-eligibility",
      "poolrelay-status",
    ]);
    expect(triggers.map((t) => t.spec.subscriber.ref.name).sort()).toEqual(
      FUNCTIONS.map((f) => `poolrelay-${f}`).sort(),
    );
  });

  it.each(services.map((s) => [s.metadata.name, s] as const))("%s scales to zero and is cluster-local", (_name, s) => {
    claim(/Services scale to zero, are cluster-local,/);
    expect(s.spec.template.metadata.annotations["autoscaling.knative.dev/min-scale"]).toBe("0");
    expect(s.metadata.labels["networking.knative.dev/visibility"]).toBe("cluster-local");
  });

  it.each(FUNCTIONS)("%s takes several requests per pod, within the docs' containerConcurrency range", (fn) => {
    const [, low, high] = claim(
      /take several requests per pod \(`containerConcurrency` (\d+)-(\d+) for eligibility, apply and status/,
    );
    const concurrency = service(fn).spec.template.spec.containerConcurrency;
    expect(concurrency).toBeGreaterThanOrEqual(Number(low));
    expect(concurrency).toBeLessThanOrEqual(Number(high));
  });

  it.each(FUNCTIONS)("%s: the Service's timeout and its Trigger's per-attempt timeout are the README's", (fn) => {
    const [, timeout, delivery] = claim(new RegExp(`\\b${fn} (\\d+) s under (\\d+) s`));
    expect(service(fn).spec.template.spec.timeoutSeconds).toBe(Number(timeout));
    expect(durationMs(trigger(fn)!.spec.delivery.timeout)).toBe(Number(delivery) * 1000);
  });

  it.each([...FUNCTIONS, "dead-letter"])(
    "%s: INVOCATION_DEADLINE_SECONDS is the README's, below the Service's timeout and the Trigger's",
    (fn) => {
      const [, deadlines] = claim(
        /set below its Knative Service's timeout and its Trigger's per-attempt timeout \(([^)]*)\)/,
      );
      const documented = new RegExp(`\\b${fn} (\\d+) s\\b`).exec(deadlines!);
      expect(documented, `the docs name ${fn}'s deadline`).not.toBeNull();
      const deadline = Number(envOf(service(fn))["INVOCATION_DEADLINE_SECONDS"]);
      expect(deadline).toBe(Number(documented![1]));
      expect(deadline).toBeLessThan(service(fn).spec.template.spec.timeoutSeconds);
      const t = trigger(fn);
      if (t) expect(deadline * 1000).toBeLessThan(durationMs(t.spec.delivery.timeout));
    },
  );

  it("the dead-letter logger takes the docs' containerConcurrency", () => {
    const [, documented] = claim(/(\d+) for dead-letter:/);
    expect(service("dead-letter").spec.template.spec.containerConcurrency).toBe(Number(documented));
  });

  it("the docs' defaults of RESYNC_PERIOD_SECONDS and RESYNC_SLOTS are the code's", () => {
    const documented = (v: string) => /^`(\d+)`/.exec(configurationTable().find((r) => r.variable === v)!.default)![1];
    const [period, slots] = [documented("RESYNC_PERIOD_SECONDS"), documented("RESYNC_SLOTS")];
    expect(parseConfig({})).toMatchObject({ resyncPeriodSeconds: Number(period), resyncSlots: Number(slots) });
  });

  it.each(services.map((s) => [s.metadata.name, s] as const))(
    "%s has a TCP readiness probe and a restricted security context",
    (_name, s) => {
      claim(
        /a TCP readiness probe \(the Functions Framework answers GET with an error\) and a restricted security context/,
      );
      expect(container(s).readinessProbe).toEqual({ tcpSocket: {} });
      // The Pod Security Standards' restricted profile, for a container.
      expect(container(s).securityContext).toEqual({
        allowPrivilegeEscalation: false,
        runAsNonRoot: true,
        capabilities: { drop: ["ALL"] },
        seccompProfile: { type: "RuntimeDefault" },
      });
    },
  );

  it("ticks the resync every RESYNC_PERIOD_SECONDS: the PingSource schedule, the eligibility Service's env and the docs agree", () => {
    const [, minutes] = claim(/a PingSource tick every (\d+) minutes/);
    const periodRow = configurationTable().find((r) => r.variable === "RESYNC_PERIOD_SECONDS")!;
    const [, documentedPeriod] = /`knative\/` sets (\d+)/.exec(periodRow.default)!;
    expect(periodRow.range).toContain("must match the PingSource schedule");
    const [, documentedSlots] = claim(/`RESYNC_SLOTS=(\d+)`/);
    const ping = ofKind<PingSource>("knative/pingsource.yaml", "PingSource")[0]!;
    const every = /^\*\/(\d+) \* \* \* \*$/.exec(ping.spec.schedule);
    expect(every, `a schedule of the form */N * * * *, got ${ping.spec.schedule}`).not.toBeNull();
    const env = envOf(service("eligibility"));
    expect(Number(every![1]) * 60).toBe(Number(env["RESYNC_PERIOD_SECONDS"]));
    expect(Number(env["RESYNC_PERIOD_SECONDS"])).toBe(Number(minutes) * 60);
    expect(env["RESYNC_PERIOD_SECONDS"]).toBe(documentedPeriod);
    expect(env["RESYNC_SLOTS"]).toBe(documentedSlots);
    // "within `RESYNC_SLOTS` periods (30 minutes) at the latest"
    const [, sweep] = claim(/within `RESYNC_SLOTS` periods \((\d+) minutes\) at the latest/);
    expect(Number(env["RESYNC_SLOTS"]) * Number(minutes)).toBe(Number(sweep));
  });

  it("watches DGDs in the version settings.env gives every program (kustomization.yaml writes it into the ApiServerSource)", () => {
    claim(
      /set `DGD_API_VERSION` in `knative\/settings\.env`: the functions, the event\s+source and the ApiServerSource's DGD entry \(a kustomize replacement\) all take it from there/,
    );
    const source = ofKind<ApiServerSource>("knative/apiserversource.yaml", "ApiServerSource")[0]!;
    const entry = source.spec.resources.find((r: { kind: string }) => r.kind === "DynamoGraphDeployment");
    expect(entry!.apiVersion).toBe("DGD_API_VERSION");
    const kustomization = docs("knative/kustomization.yaml")[0] as Kustomization;
    expect(kustomization.replacements).toEqual([
      {
        source: { kind: "ConfigMap", name: "poolrelay-settings", fieldPath: "data.DGD_API_VERSION" },
        targets: [
          {
            select: { kind: "ApiServerSource", name: "poolrelay-watch" },
            fieldPaths: ["spec.resources.[kind=DynamoGraphDeployment].apiVersion"],
          },
        ],
      },
    ]);
    expect(settingsFile()["DGD_API_VERSION"]).toBe(parseConfig({}).dgdApiVersion);
  });
});
