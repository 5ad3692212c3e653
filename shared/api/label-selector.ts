/**
 * The schema of a label selector field (metav1.LabelSelector) in the DynamoPoolRelay's CRD. A CRD
 * does not get the API server's built-in checks of a LabelSelector, so each is stated here: key
 * and value syntax as OpenAPI patterns, the operators as an enum, and the operator's need for
 * values as a CEL rule, which a zod refinement mirrors word for word.
 */
import * as z from "../zod.ts";
import { LABEL_KEY, LABEL_VALUE } from "../label-selector.ts";
import { CEL, tooMany } from "./admission.ts";

/** Labels a matchLabels may name: far more than a selector needs, few enough for its CEL rule's cost. */
export const MAX_MATCH_LABELS = 64;

const NEEDS_VALUES = "self.operator == 'In' || self.operator == 'NotIn'";
export const VALUES_RULE = {
  rule: `(${NEEDS_VALUES}) ? (has(self.values) && size(self.values) > 0) : (!has(self.values) || size(self.values) == 0)`,
  messageExpression: `(${NEEDS_VALUES}) ? 'the operator ' + self.operator + ' needs at least one value' : 'the operator ' + self.operator + ' takes no values'`,
};
const MATCH_LABEL_KEYS_RULE = {
  // A raw string: in a quoted one, CEL refuses the pattern's \. as an escape.
  rule: `self.all(k, k.matches(r'${LABEL_KEY.source}'))`,
  message:
    "every key of matchLabels must be a label key: an optional DNS subdomain and '/', then 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit",
};

/** What VALUES_RULE's messageExpression evaluates to. */
export function valuesMessage(operator: string): string {
  return operator === "In" || operator === "NotIn"
    ? `the operator ${operator} needs at least one value`
    : `the operator ${operator} takes no values`;
}

const labelValue = (description: string) =>
  z.string().check(z.maxLength(63), z.regex(LABEL_VALUE), z.meta({ description }));

const Requirement = z
  .object({
    key: z.string().check(z.maxLength(317), z.regex(LABEL_KEY), z.meta({ description: "The label key." })),
    operator: z
      .enum(["In", "NotIn", "Exists", "DoesNotExist"])
      .check(z.meta({ description: "How the label relates to the values." })),
    values: z
      .optional(z.array(labelValue("A label value.")).check(z.maxLength(64)))
      .check(z.meta({ description: "The values: one or more for In and NotIn, none for Exists and DoesNotExist." })),
  })
  .check(
    z.superRefine((r, ctx) => {
      const count = r.values?.length ?? 0;
      if ((r.operator === "In" || r.operator === "NotIn") !== count > 0)
        ctx.addIssue({ code: "custom", path: [], message: valuesMessage(r.operator), params: CEL });
    }),
    z.meta({ description: "A label requirement.", "x-kubernetes-validations": [VALUES_RULE] }),
  );

export const LabelSelector = z
  .object({
    matchLabels: z.optional(z.record(z.string(), labelValue("The value the label must have."))).check(
      z.superRefine((labels, ctx) => {
        const keys = Object.keys(labels ?? {});
        if (keys.length > MAX_MATCH_LABELS)
          ctx.addIssue({ code: "custom", path: [], message: "", params: tooMany(keys.length, MAX_MATCH_LABELS) });
        else if (keys.some((k) => !LABEL_KEY.test(k)))
          ctx.addIssue({ code: "custom", path: [], message: MATCH_LABEL_KEYS_RULE.message, params: CEL });
      }),
      z.meta({
        description: "Labels a DynamoGraphDeployment must have, each with this value.",
        // Bounds the CEL rule's cost, which the API server estimates from the map's largest size.
        maxProperties: MAX_MATCH_LABELS,
        "x-kubernetes-validations": [MATCH_LABEL_KEYS_RULE],
      }),
    ),
    matchExpressions: z
      .optional(z.array(Requirement).check(z.maxLength(32)))
      .check(z.meta({ description: "Requirements every selected DynamoGraphDeployment's labels meet." })),
  })
  .check(
    z.meta({
      description:
        "A label selector: a DynamoGraphDeployment is selected when it has every label of matchLabels and meets every requirement of matchExpressions.",
    }),
  );
export type LabelSelector = z.infer<typeof LabelSelector>;
