/**
 * The product's objects with its traffic through the fault suite's proxies, before they are applied:
 * - its functions (the Knative Services) reach the API server through the API fault proxy: their
 *   in-cluster connection is KUBERNETES_SERVICE_HOST/PORT (shared/kube/credentials.ts), which the
 *   container's own env overrides over the kubelet's;
 * - the Broker delivers to the functions, and the sources (and the resync, through the SinkBinding)
 *   send into the Broker, through the delivery-fault proxy: each Trigger's subscriber and each
 *   source's sink becomes that proxy's URI for what it named (a `uri` destination, which Knative's
 *   webhooks accept). Dead-letter sinks stay as they are: the suite counts what reaches them.
 */
import type { KubeObject, ObjectRef } from "../../shared/kube/client.ts";

export interface Proxies {
  /** The API fault proxy, as pods reach it. */
  apiServer: URL;
  /** The delivery-fault proxy's URI for deliveries to `ref`. */
  delivery: (ref: ObjectRef) => string;
}

const SINKS = new Set(["ApiServerSource", "PingSource", "SinkBinding"]);

interface Env {
  name: string;
  value?: string;
}
interface Spec {
  subscriber?: { ref?: ObjectRef };
  sink?: { ref?: ObjectRef };
  template?: { spec: { containers: { env?: Env[] }[] } };
}

export function throughProxies(objects: KubeObject[], proxies: Proxies): KubeObject[] {
  return objects.map((o) => {
    const spec = o["spec"] as Spec | undefined;
    const to = (ref: ObjectRef | undefined) => {
      if (!ref) throw new Error(`${o.kind} ${o.metadata.name} names no ref to route through the delivery proxy`);
      return { uri: proxies.delivery({ ...ref, namespace: ref.namespace ?? o.metadata.namespace }) };
    };
    if (o.apiVersion === "serving.knative.dev/v1" && o.kind === "Service") {
      const api = [
        { name: "KUBERNETES_SERVICE_HOST", value: proxies.apiServer.hostname },
        { name: "KUBERNETES_SERVICE_PORT", value: proxies.apiServer.port },
      ];
      const containers = spec!.template!.spec.containers.map((c) => ({
        ...c,
        env: [...(c.env ?? []).filter((e) => !api.some((a) => a.name === e.name)), ...api],
      }));
      return {
        ...o,
        spec: { ...spec, template: { ...spec!.template, spec: { ...spec!.template!.spec, containers } } },
      };
    }
    if (o.kind === "Trigger") return { ...o, spec: { ...spec, subscriber: to(spec?.subscriber?.ref) } };
    if (SINKS.has(o.kind)) return { ...o, spec: { ...spec, sink: to(spec?.sink?.ref) } };
    return o;
  });
}
