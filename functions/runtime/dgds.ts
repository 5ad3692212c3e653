/**
 * The DGDs a DynamoPoolRelay's decision reads, for apply and status alike: with spec.dgdSelector,
 * those of its namespace the selector matches, in one LIST the API server filters; without, the
 * one of its name, by a GET. List items come without apiVersion and kind: they are put back, so a
 * listed DGD parses as a read one does.
 */
import { selectorQuery, type LabelSelector } from "../../shared/label-selector.ts";
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";

const KIND = "DynamoGraphDeployment";

export async function readDgds(
  kube: KubeClient,
  apiVersion: string,
  dpr: { metadata: { namespace?: string; name: string }; spec?: { dgdSelector?: LabelSelector } },
): Promise<KubeObject[]> {
  const namespace = dpr.metadata.namespace ?? "default";
  const selector = dpr.spec?.dgdSelector;
  if (selector) {
    const items = await kube.list<KubeObject>(apiVersion, KIND, namespace, selectorQuery(selector));
    return items.map((d) => ({ ...d, apiVersion, kind: KIND }));
  }
  const dgd = await kube.get<KubeObject>({ apiVersion, kind: KIND, namespace, name: dpr.metadata.name });
  return dgd ? [dgd] : [];
}
