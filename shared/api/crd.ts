/** The DynamoPoolRelay CustomResourceDefinition, built from the zod schema. */
import {
  CATEGORY,
  GROUP,
  KIND,
  LABEL_NAME,
  LABEL_PART_OF,
  PLURAL,
  PRODUCT,
  SHORT_NAME,
  SINGULAR,
  VERSION,
} from "../names.ts";
import { DynamoPoolRelaySpec, DynamoPoolRelayStatus, ROOT_VALIDATIONS } from "./dynamo-pool-relay.ts";
import { printerColumns } from "./columns.ts";
import { toOpenApi } from "./openapi.ts";

export function dynamoPoolRelayCrd() {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      name: `${PLURAL}.${GROUP}`,
      // part-of as on every object of knative/: the CRD is installed with them, as part of this product.
      labels: { [LABEL_PART_OF]: PRODUCT, [LABEL_NAME]: PRODUCT },
    },
    spec: {
      group: GROUP,
      names: {
        kind: KIND,
        listKind: `${KIND}List`,
        plural: PLURAL,
        singular: SINGULAR,
        shortNames: [SHORT_NAME],
        categories: [CATEGORY],
      },
      scope: "Namespaced",
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: {
            status: {},
            // For `kubectl scale dpr` and HorizontalPodAutoscalers. spec.replicas is always there (it
            // defaults), as the scale subresource needs; the selector finds the pods for pod metrics.
            scale: {
              specReplicasPath: ".spec.replicas",
              statusReplicasPath: ".status.replicas",
              labelSelectorPath: ".status.labelSelector",
            },
          },
          additionalPrinterColumns: printerColumns(),
          schema: {
            openAPIV3Schema: {
              description:
                "DynamoPoolRelay runs the PoolRelay for the DynamoGraphDeployment of the same name and publishes it as the Service <name>-pool-relay.",
              type: "object",
              required: ["spec"],
              properties: {
                apiVersion: { type: "string", description: "APIVersion of this object." },
                kind: { type: "string", description: "Kind of this object." },
                // The API server forbids anything but the type on metadata (it publishes ObjectMeta's own descriptions).
                metadata: { type: "object" },
                spec: toOpenApi(DynamoPoolRelaySpec),
                status: toOpenApi(DynamoPoolRelayStatus),
              },
              "x-kubernetes-validations": ROOT_VALIDATIONS,
            },
          },
        },
      ],
    },
  };
}
