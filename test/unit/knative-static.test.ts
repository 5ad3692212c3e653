// Rules the API server's dry-run cannot check in knative/ and the Dockerfile.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";

/** ISO-8601 durations as Knative writes them (PT0.5S, PT60S, PT1M), in milliseconds. */
function durationMs(iso: string): number {
  const m = /^PT(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?$/.exec(iso);
  if (!m) throw new Error(`not a duration this test reads: ${iso}`);
  return Math.round((Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0)) * 1000);
}

const read = (f: string) => readFileSync(new URL(`../../${f}`, import.meta.url), "utf8");
const docs = (f: string) => parseAllDocuments(read(f)).map((d) => d.toJS()).filter(Boolean);
const services = docs("knative/services.yaml").filter((d) => d.kind === "Service");
const triggers = docs("knative/triggers.yaml").filter((d) => d.kind === "Trigger");

describe("knative/ and the Dockerfile", () => {
  it.each(triggers.map((t) => [t.metadata.name, t]))("%s: the Service's timeout is below the Trigger's per-attempt timeout", (_name, trigger) => {
    const service = services.find((s) => s.metadata.name === trigger.spec.subscriber.ref.name);
    expect(service.spec.template.spec.timeoutSeconds * 1000).toBeLessThan(durationMs(trigger.spec.delivery.timeout));
  });

  it.each(services.map((s) => [s.metadata.name, s]))("%s: each invocation's deadline ends before the Service's timeout", (_name, service) => {
    const env = Object.fromEntries(service.spec.template.spec.containers[0].env.map((e: { name: string; value: string }) => [e.name, e.value]));
    expect(env["INVOCATION_DEADLINE_SECONDS"]).toMatch(/^\d+$/);
    // Room for the reply to travel back and for a cold start the timeout also covers.
    expect(Number(env["INVOCATION_DEADLINE_SECONDS"])).toBeLessThanOrEqual(service.spec.template.spec.timeoutSeconds * 0.85);
  });

  it("runs as a numeric user, so the kubelet can verify runAsNonRoot", () => {
    expect(read("Dockerfile")).toMatch(/^USER \d+(:\d+)?$/m);
    for (const s of services) expect(s.spec.template.spec.containers[0].securityContext.runAsNonRoot).toBe(true);
  });

  it("points every Service at a bundle the Dockerfile copies, for its FUNCTION_TARGET", () => {
    expect(read("Dockerfile")).toMatch(/COPY --from=build \/src\/dist\/functions \.\/functions/);
    for (const s of services) {
      const env = Object.fromEntries(s.spec.template.spec.containers[0].env.map((e: { name: string; value: string }) => [e.name, e.value]));
      expect(env["FUNCTION_SOURCE"]).toBe(`/app/functions/${env["FUNCTION_TARGET"]}/index.mjs`);
      expect(s.metadata.name).toBe(`poolrelay-${env["FUNCTION_TARGET"]}`);
    }
  });

  it("starts every function through the entry point with the body limit, in the image as on the local kubelet", () => {
    // The framework's own main.js would serve without the limit.
    expect(read("Dockerfile")).toMatch(/^CMD \["node", "functions\/main\.mjs"\]$/m);
    expect(read("dev/knative/host-main.ts")).toContain(`command: [process.execPath, join(root, "dist/functions/main.mjs")]`);
  });
});
