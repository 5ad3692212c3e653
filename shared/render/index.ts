/**
 * The complete desired set of children for an apply decision, each after what it needs: identity
 * and permissions first, then the document, the workload, and last the Service that publishes it
 * (apply sends them in waves of that order: writeWaves in shared/apply-plan.ts).
 */
import type { Decision } from "../decide.ts";
import { renderConfigMap } from "./config-map.ts";
import { renderDeployment } from "./deployment.ts";
import { renderRole } from "./role.ts";
import { renderRoleBinding } from "./role-binding.ts";
import { renderService } from "./service.ts";
import { renderServiceAccount } from "./service-account.ts";
import type { OwnerReference } from "./metadata.ts";

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; labels: Record<string, string>; ownerReferences?: OwnerReference[] };
  [field: string]: unknown;
}

export function renderChildren(decision: Extract<Decision, { action: "apply" }>): KubeObject[] {
  return CHILD_KINDS.map((kind) => renderChild(decision, kind));
}

/** One child of the set, alone: what judging one observed child needs. */
export function renderChild(decision: Extract<Decision, { action: "apply" }>, kind: ChildKind): KubeObject {
  const { dpr } = decision;
  switch (kind) {
    case "ServiceAccount":
      return renderServiceAccount(dpr);
    case "Role":
      return renderRole(dpr);
    case "RoleBinding":
      return renderRoleBinding(dpr);
    case "ConfigMap":
      return renderConfigMap(decision);
    case "Deployment":
      return renderDeployment(decision);
    case "Service":
      return renderService(dpr);
  }
}

/** The kinds renderChildren produces, for RBAC and for reading the observed children. */
export const CHILD_KINDS = ["ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Deployment", "Service"] as const;
export type ChildKind = (typeof CHILD_KINDS)[number];
