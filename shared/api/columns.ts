/**
 * The DynamoPoolRelay CRD's printer columns: what `kubectl get dpr` shows, and what the resync
 * lists. A resync tick asks the API server for DynamoPoolRelays as a Table with no objects
 * (shared/resync.ts, candidatesOf): the cells of the columns it names here are all it decides
 * from, about 26 times fewer bytes than the objects with their managedFields (npm run bench:scale).
 */

const readyCondition = (field: string) => `.status.conditions[?(@.type=="Ready")].${field}`;

/** The columns the resync reads, by the name the API server gives each cell's column. */
export const ResyncColumn = {
  Name: "Name",
  Namespace: "Namespace",
  Generation: "Generation",
  Observed: "Observed",
  Ready: "Ready",
  Reason: "Reason",
} as const;

/**
 * In the order kubectl shows them; priority 1 only with `-o wide`. The API server adds Name first.
 * A function, so that a bundle needing only the resync's names (apply's, through shared/resync.ts)
 * leaves the definitions out.
 */
export const printerColumns = () => [
  {
    name: ResyncColumn.Ready,
    type: "string",
    jsonPath: readyCondition("status"),
    description: "Whether the Relay listens behind its published Service",
  },
  // A printer column is one JSONPath, so ready/desired (as kubectl get deploy shows READY) is a status field.
  {
    name: "Replicas",
    type: "string",
    jsonPath: ".status.readyOfDesired",
    description: "Ready Relay pods / desired (spec.replicas)",
  },
  { name: "Endpoint", type: "string", jsonPath: ".status.serviceEndpoint", description: "gRPC address of the Relay" },
  {
    name: ResyncColumn.Reason,
    type: "string",
    jsonPath: readyCondition("reason"),
    priority: 1,
    description: "Why the Relay is or is not Ready",
  },
  {
    name: ResyncColumn.Generation,
    type: "integer",
    jsonPath: ".metadata.generation",
    priority: 1,
    description: "The spec's generation",
  },
  {
    name: ResyncColumn.Observed,
    type: "integer",
    jsonPath: ".status.observedGeneration",
    priority: 1,
    description: "The generation the status reflects: behind Generation while a change is being reconciled",
  },
  // The resync lists every namespace's objects as a Table without the objects, so it has the
  // namespace only as a cell (kubectl's own NAMESPACE column with -A comes from the object).
  {
    name: ResyncColumn.Namespace,
    type: "string",
    jsonPath: ".metadata.namespace",
    priority: 1,
    description: "Namespace of the DynamoPoolRelay",
  },
  // Blank for a DynamoPoolRelay paired by name: the counts are a selector's.
  {
    name: "Selected",
    type: "integer",
    jsonPath: ".status.selectedDGDs",
    priority: 1,
    description: "DynamoGraphDeployments spec.dgdSelector matches",
  },
  {
    name: "Eligible",
    type: "integer",
    jsonPath: ".status.eligibleDGDs",
    priority: 1,
    description: "Of those, the eligible ones: the Relay's sources",
  },
  { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
];
