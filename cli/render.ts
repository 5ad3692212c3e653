/**
 * `poolrelay render`: what the product would do for each DynamoPoolRelay in the input, computed by
 * the same core the functions run, with no cluster.
 */
import { stringify } from "yaml";
import { admissionMessage } from "../shared/api/admission.ts";
import { DynamoPoolRelay } from "../shared/api/dynamo-pool-relay.ts";
import { DynamoGraphDeployment } from "../shared/api/dynamo-graph-deployment.ts";
import { decideAmong, objectKey, type Decision } from "../shared/decide.ts";
import type { OperatorDefaults } from "../shared/eligibility.ts";
import { formatIssues } from "../shared/issues.ts";
import { childName } from "../shared/names.ts";
import { renderChildren, type KubeObject } from "../shared/render/index.ts";
import { computeStatus } from "../shared/status.ts";
import { InputError, type SourcedObject } from "./input.ts";

export interface RenderOptions {
  namespace: string;
  defaults: OperatorDefaults;
  now: string;
}

export interface RenderResult {
  dynamoPoolRelay: string;
  action: "apply" | "withdraw";
  reason: string;
  message: string;
  apply: KubeObject[];
  withdraw: { apiVersion: "v1"; kind: "Service"; namespace: string; name: string; onlyIfControlledBy: string }[];
  status: ReturnType<typeof computeStatus>;
}

function withNamespace(obj: Record<string, unknown>, namespace: string): Record<string, unknown> {
  const metadata = (obj["metadata"] ?? {}) as Record<string, unknown>;
  return { ...obj, metadata: { ...metadata, namespace: metadata["namespace"] ?? namespace } };
}

function validated(objects: readonly SourcedObject[], namespace: string) {
  const dprs: Record<string, unknown>[] = [];
  const dgds = new Map<string, Record<string, unknown>>();
  const problems: string[] = [];
  for (const { object, origin } of objects) {
    const obj = withNamespace(object, namespace);
    if (obj["kind"] === "DynamoPoolRelay") {
      // The API server's words: what `kubectl apply` of the same object would answer.
      const r = DynamoPoolRelay.safeParse(obj, { reportInput: true });
      if (r.success) dprs.push(obj);
      else
        problems.push(
          `${origin}: ${admissionMessage(r.error, ((obj["metadata"] as Record<string, unknown>)["name"] as string | undefined) ?? "")}`,
        );
    } else if (obj["kind"] === "DynamoGraphDeployment") {
      const r = DynamoGraphDeployment.safeParse(obj);
      if (r.success) dgds.set(objectKey(obj), obj);
      else problems.push(`${origin}: ${formatIssues(r.error, `DynamoGraphDeployment ${objectKey(obj)}`)}`);
    }
  }
  if (problems.length > 0) throw new InputError(problems.join("\n"));
  return { dprs: dprs.sort((a, b) => objectKey(a).localeCompare(objectKey(b))), dgds };
}

function result(decision: Exclude<Decision, { action: "reject" }>, options: RenderOptions): RenderResult {
  const { dpr } = decision;
  const key = objectKey(dpr);
  const status = computeStatus({
    dpr,
    decision,
    observed: { endpointSlices: [] },
    foreign: [],
    previous: undefined,
    observedGeneration: dpr.metadata.generation,
    now: options.now,
    // What it reports once the children carry the decision.
    reflects: true,
  });
  if (decision.action === "apply") {
    return {
      dynamoPoolRelay: key,
      action: "apply",
      reason: "Eligible",
      message: "",
      apply: renderChildren(decision),
      withdraw: [],
      status,
    };
  }
  return {
    dynamoPoolRelay: key,
    action: "withdraw",
    reason: decision.reason,
    message: decision.message,
    apply: [],
    withdraw: [
      {
        apiVersion: "v1",
        kind: "Service",
        namespace: dpr.metadata.namespace ?? options.namespace,
        name: childName(dpr.metadata.name),
        onlyIfControlledBy: `DynamoPoolRelay ${key}`,
      },
    ],
    status,
  };
}

export function render(objects: readonly SourcedObject[], options: RenderOptions): RenderResult[] {
  const { dprs, dgds } = validated(objects, options.namespace);
  return dprs.map((dpr) => {
    // Those of its namespace: the one of its name, or those its spec.dgdSelector matches.
    const namespace = objectKey(dpr).split("/")[0];
    const candidates = [...dgds.values()].filter((d) => objectKey(d).split("/")[0] === namespace);
    const decision = decideAmong(dpr, candidates as never, options.defaults);
    // validated() already parsed every DynamoPoolRelay, so the core cannot reject one here.
    if (decision.action === "reject") throw new InputError(decision.message);
    return result(decision, options);
  });
}

const comment = (text: string) =>
  text
    .split("\n")
    .map((l) => `# ${l}`.trimEnd())
    .join("\n");

export function toYaml(results: readonly RenderResult[]): string {
  const docs = results.flatMap((r) => {
    if (r.action === "apply") {
      return r.apply.map(
        (obj, i) =>
          `${i === 0 ? `# DynamoPoolRelay ${r.dynamoPoolRelay}: eligible, apply ${r.apply.length} objects\n` : ""}${stringify(obj, { lineWidth: 0 })}`,
      );
    }
    const w = r.withdraw[0]!;
    return [
      [
        `# DynamoPoolRelay ${r.dynamoPoolRelay}: not eligible (${r.reason}): ${r.message}`,
        `# withdraw: Service ${w.namespace}/${w.name}, only if its controller is this DynamoPoolRelay`,
        "# status it would report:",
        comment(stringify({ status: r.status }, { lineWidth: 0 }).trimEnd()),
        "",
      ].join("\n"),
    ];
  });
  return docs.join("---\n");
}

export function toJson(results: readonly RenderResult[]): string {
  return `${JSON.stringify(results, null, 2)}\n`;
}
