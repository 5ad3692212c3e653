// The status of a DynamoPoolRelay, rebuilt from the decision and the observed children, as
// shared/status.ts (computeStatus) and shared/status-plan.ts (planStatus) make it.
package main

import (
	"fmt"
	"strings"
)

var conditionOrder = []string{"Ready", "Eligible", "ServicePublished", "ListenerAvailable"}

type verdict struct {
	status          bool
	reason, message string
}

// statusInput: what computeStatus takes. The classic peer reads every child from its cache, so a
// Service is always observed (the product's AS_STORED never arises).
type statusInput struct {
	dpr                *DPR
	decision           Decision
	deployment         M // nil when absent
	service            M // nil when absent
	readyEndpoints     int
	observedGeneration *int64
	now                string
	applyFailure       string
	foreign            []string
	reflects           bool
	sourcesRV          string
}

func previousCondition(previous M, typ string) M {
	conds, _ := previous["conditions"].([]interface{})
	for _, c := range conds {
		if m, ok := c.(map[string]interface{}); ok && m["type"] == typ {
			return m
		}
	}
	return nil
}

func condition(typ string, v verdict, in statusInput) M {
	status := "False"
	if v.status {
		status = "True"
	}
	c := M{"type": typ, "status": status, "reason": v.reason, "message": v.message, "lastTransitionTime": in.now}
	if in.dpr.HasGeneration {
		c["observedGeneration"] = in.dpr.Generation
	}
	if p := previousCondition(in.dpr.Status, typ); p != nil && p["status"] == status {
		c["lastTransitionTime"] = p["lastTransitionTime"]
	}
	return c
}

func published(own string, d Decision, name string) verdict {
	svc := "Service " + name
	if own == "foreign" {
		return verdict{false, "ServiceNotOwned", svc + " exists but is not controlled by this DynamoPoolRelay; it is left untouched"}
	}
	if d.Action == "withdraw" {
		if own == "ours" {
			return verdict{true, "Withdrawing", svc + " is still published; it is being withdrawn: " + d.Message}
		}
		return verdict{false, "Withdrawn", svc + " is withdrawn: " + d.Message}
	}
	if own == "absent" {
		return verdict{false, "ServiceNotFound", svc + " does not exist yet"}
	}
	return verdict{true, "Published", svc + " is published"}
}

func listener(ready int) verdict {
	if ready > 0 {
		plural := "s"
		if ready == 1 {
			plural = ""
		}
		return verdict{true, "EndpointsReady", fmt.Sprintf("%d ready Relay endpoint%s behind the Service", ready, plural)}
	}
	return verdict{false, "NoReadyEndpoints", "no ready Relay endpoint behind the Service"}
}

func num(m M, key string) (int64, bool) {
	if m == nil {
		return 0, false
	}
	return isInt(m[key])
}

func numOr(m M, key string, def int64) int64 {
	if n, ok := num(m, key); ok {
		return n
	}
	return def
}

// rolledOut: a replica of the Deployment's current pod template is available.
func rolledOut(deployment M) bool {
	if deployment == nil {
		return false
	}
	status, _ := deployment["status"].(map[string]interface{})
	if status == nil {
		return false
	}
	old := numOr(status, "replicas", 0) - numOr(status, "updatedReplicas", 0)
	return numOr(status, "observedGeneration", -1) >= numOr(metaOfObj(deployment), "generation", 0) && numOr(status, "availableReplicas", 0)-old > 0
}

func readiness(eligible, pub, lst verdict, in statusInput) verdict {
	if !eligible.status {
		return verdict{false, "NotEligible", eligible.message}
	}
	if n := len(in.foreign); n > 0 {
		verb, pron := "exist and are", "them"
		if n == 1 {
			verb, pron = "exists and is", "it"
		}
		return verdict{false, "ForeignChild", fmt.Sprintf("%s %s not controlled by this DynamoPoolRelay; nothing that needs %s is applied (delete or rename %s)", strings.Join(in.foreign, ", "), verb, pron, pron)}
	}
	if in.applyFailure != "" {
		return verdict{false, "ApplyFailed", in.applyFailure}
	}
	if !in.reflects {
		gen := int64(1)
		if in.dpr.HasGeneration {
			gen = in.dpr.Generation
		}
		return verdict{false, "Reconciling", fmt.Sprintf("the children do not carry the decision for generation %d yet", gen)}
	}
	if !pub.status {
		return verdict{false, "ServiceNotPublished", pub.message}
	}
	if !rolledOut(in.deployment) {
		return verdict{false, "RolloutPending", "no Relay replica of the current Deployment generation is available yet"}
	}
	if !lst.status {
		return verdict{false, "ListenerUnavailable", lst.message}
	}
	return verdict{true, "Ready", "the Relay listens at " + serviceEndpoint(in.dpr.Name, nsOrDefault(in.dpr.Namespace))}
}

func nsOrDefault(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

func labelSelector(name string) string {
	return labelInstance + "=" + name + "," + labelName + "=" + product
}

func copyMap(m M) M {
	out := M{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func computeStatus(in statusInput) M {
	d, dpr := in.decision, in.dpr
	previous := dpr.Status
	if previous == nil {
		previous = M{}
	}
	if d.Action == "reject" {
		out := copyMap(previous)
		if in.observedGeneration != nil {
			out["observedGeneration"] = *in.observedGeneration
		}
		out["labelSelector"] = labelSelector(dpr.Name)
		conds := A{condition("Ready", verdict{false, d.Reason, d.Message}, in)}
		old, _ := previous["conditions"].([]interface{})
		for _, c := range old {
			if m, ok := c.(map[string]interface{}); !ok || m["type"] != "Ready" {
				conds = append(conds, c)
			}
		}
		out["conditions"] = conds
		return out
	}
	name := nsOrDefault(dpr.Namespace) + "/" + dpr.Name
	eligible := verdict{true, "Eligible", "DynamoGraphDeployment " + name + " uses Kubernetes discovery in Pod mode"}
	if d.Action != "apply" {
		eligible = verdict{false, d.Reason, d.Message}
	}
	pub := published(ownership(in.service, dpr.UID), d, dpr.Name+serviceSuffix)
	lst := listener(in.readyEndpoints)
	ready := readiness(eligible, pub, lst, in)
	verdicts := map[string]verdict{"Ready": ready, "Eligible": eligible, "ServicePublished": pub, "ListenerAvailable": lst}
	conds := A{}
	for _, t := range conditionOrder {
		conds = append(conds, condition(t, verdicts[t], in))
	}
	var depStatus M
	if in.deployment != nil {
		depStatus, _ = in.deployment["status"].(map[string]interface{})
	}
	readyReplicas := numOr(depStatus, "readyReplicas", 0)
	out := M{
		"conditions":     conds,
		"replicas":       numOr(depStatus, "replicas", 0),
		"readyReplicas":  readyReplicas,
		"readyOfDesired": fmt.Sprintf("%d/%d", readyReplicas, dpr.Spec.Replicas),
		"labelSelector":  labelSelector(dpr.Name),
	}
	if in.observedGeneration != nil {
		out["observedGeneration"] = *in.observedGeneration
	}
	if pub.status {
		out["serviceEndpoint"] = serviceEndpoint(dpr.Name, nsOrDefault(dpr.Namespace))
	}
	if d.Action == "apply" {
		if in.reflects {
			namespaces := make(A, len(d.WorkerNamespaces))
			for i, n := range d.WorkerNamespaces {
				namespaces[i] = n
			}
			out["workerNamespaces"] = namespaces
			out["sourcesRevision"] = d.SourcesRevision
			out["connectionRevision"] = d.ConnectionRevision
			if in.sourcesRV != "" {
				out["sourcesResourceVersion"] = in.sourcesRV
			}
		} else {
			// The sources and connection the previous status reported: still in effect while the children lag.
			if v, ok := previous["workerNamespaces"]; ok && v != nil {
				out["workerNamespaces"] = v
			}
			for _, k := range []string{"sourcesRevision", "connectionRevision"} {
				if s, ok := previous[k].(string); ok && s != "" {
					out[k] = s
				}
			}
		}
	}
	return out
}

// planInput: what planStatus takes; live holds the children read (all six for an apply, the
// Deployment and the Service for a withdrawal, none for a rejection).
type planInput struct {
	dpr            *DPR
	decision       Decision
	desired        []M
	live           liveChildren
	readyEndpoints int
	// The API server's refusal of this run's apply, as the product's apply reports it ("" when none).
	refused string
	now     string
}

type statusPlan struct {
	status   M
	write    bool
	reflects bool
}

// applyFailure: the refusal shown while the children do not carry this generation's decision.
func applyFailure(in planInput, reflects bool) string {
	if reflects || in.decision.Action != "apply" {
		return ""
	}
	if in.refused != "" {
		return "the API server refused a child: " + in.refused
	}
	gen := int64(1)
	if in.dpr.HasGeneration {
		gen = in.dpr.Generation
	}
	if ready := previousCondition(in.dpr.Status, "Ready"); ready != nil && ready["reason"] == "ApplyFailed" {
		if og, ok := isInt(ready["observedGeneration"]); ok && og == gen {
			msg, _ := ready["message"].(string)
			return msg
		}
	}
	return ""
}

func planStatus(in planInput) statusPlan {
	dpr := in.dpr
	reflects := reflectsDecision(in.decision, in.desired, in.live, dpr.UID)
	var observedGeneration *int64
	if prev, ok := num(dpr.Status, "observedGeneration"); ok {
		observedGeneration = &prev
	}
	if reflects {
		gen := int64(1)
		if dpr.HasGeneration {
			gen = dpr.Generation
		}
		if observedGeneration == nil || *observedGeneration < gen {
			if observedGeneration == nil && gen < 0 {
				gen = 0
			}
			observedGeneration = &gen
		}
	}
	sourcesRV := ""
	if cm := in.live["ConfigMap"]; cm != nil && controlledBy(cm, dpr.UID) {
		sourcesRV, _ = metaOfObj(cm)["resourceVersion"].(string)
	}
	status := computeStatus(statusInput{
		dpr: dpr, decision: in.decision, deployment: in.live["Deployment"], service: in.live["Service"],
		readyEndpoints: in.readyEndpoints, observedGeneration: observedGeneration, now: in.now,
		applyFailure: applyFailure(in, reflects), foreign: foreignChildren(in.desired, in.live, dpr.UID),
		reflects: reflects, sourcesRV: sourcesRV,
	})
	stored := dpr.Status
	if stored == nil {
		stored = M{}
	}
	return statusPlan{status: status, write: stableJSON(status) != stableJSON(stored), reflects: reflects}
}
