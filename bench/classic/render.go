// The six children of an apply decision, as shared/render/*.ts renders them, each with the
// applied-hash annotation of shared/apply-plan.ts (withAppliedHash): the SHA-256 of the
// stableJson of the rendered object, so the hash equals the product's for the same decision.
package main

import "strconv"

// childKinds in apply order: identity and permissions first, then the document, the workload,
// and last the Service that publishes it.
var childKinds = []string{"ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Deployment", "Service"}

func childMeta(dpr *DPR, discovery bool) M {
	labels := commonLabels(dpr.Name)
	if discovery {
		withDiscoveryLabels(labels)
	}
	ns := dpr.Namespace
	if ns == "" {
		ns = "default"
	}
	meta := M{"name": childName(dpr.Name), "namespace": ns, "labels": labels}
	if dpr.UID != "" {
		meta["ownerReferences"] = A{M{
			"apiVersion": apiVersion, "kind": kindDPR, "name": dpr.Name, "uid": dpr.UID,
			"controller": true, "blockOwnerDeletion": true,
		}}
	}
	return meta
}

func renderServiceAccount(dpr *DPR) M {
	return M{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": childMeta(dpr, false)}
}

func renderRole(dpr *DPR) M {
	return M{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": childMeta(dpr, false),
		"rules": A{
			M{"apiGroups": A{"nvidia.com"}, "resources": A{"dynamoworkermetadatas"}, "verbs": A{"get", "list", "watch", "create", "patch", "delete"}},
			M{"apiGroups": A{"discovery.k8s.io"}, "resources": A{"endpointslices"}, "verbs": A{"get", "list", "watch"}},
		},
	}
}

func renderRoleBinding(dpr *DPR) M {
	meta := childMeta(dpr, false)
	return M{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta,
		"roleRef":  M{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": childName(dpr.Name)},
		"subjects": A{M{"kind": "ServiceAccount", "name": meta["name"], "namespace": meta["namespace"]}},
	}
}

func renderConfigMap(d Decision) M {
	return M{"apiVersion": "v1", "kind": "ConfigMap", "metadata": childMeta(d.DPR, false), "data": M{sourcesKey: d.SourcesText}}
}

func fieldRef(name, path string) M {
	return M{"name": name, "valueFrom": M{"fieldRef": M{"apiVersion": "v1", "fieldPath": path}}}
}

func renderDeployment(d Decision) M {
	dpr := d.DPR
	spec := dpr.Spec
	meta := childMeta(dpr, false)
	meta["labels"].(M)[labelSinkBindingExclude] = "true"
	ns := meta["namespace"].(string)
	env := A{
		M{"name": envDCID, "value": spec.ClusterID},
		M{"name": envConnectionRevision, "value": d.ConnectionRevision},
		M{"name": envDiscoveryBackend, "value": "kubernetes"},
		M{"name": envDiscoveryMode, "value": "pod"},
		M{"name": envNamespace, "value": "pool-relay-" + baseNamespace(ns, dpr.Name)},
		M{"name": envSystemPort, "value": strconv.Itoa(systemPort)},
		fieldRef(envPodName, "metadata.name"),
		fieldRef(envPodNamespace, "metadata.namespace"),
		fieldRef(envPodUID, "metadata.uid"),
	}
	env = append(env, spec.Env...)
	command := make(A, len(d.RelayCommand))
	for i, c := range d.RelayCommand {
		command[i] = c
	}
	container := M{
		"name":    containerName,
		"image":   spec.Image,
		"command": command,
		"args":    A{"--bind", "0.0.0.0:" + strconv.Itoa(grpcPort), "--sources-file", sourcesPath},
		"env":     env,
		"ports": A{
			M{"name": "grpc", "containerPort": int64(grpcPort), "protocol": "TCP"},
			M{"name": "system", "containerPort": int64(systemPort), "protocol": "TCP"},
		},
		"startupProbe":    M{"grpc": M{"port": int64(grpcPort), "service": grpcService}, "periodSeconds": int64(5), "failureThreshold": int64(60)},
		"readinessProbe":  M{"grpc": M{"port": int64(grpcPort), "service": grpcService}, "periodSeconds": int64(10)},
		"livenessProbe":   M{"grpc": M{"port": int64(grpcPort)}, "periodSeconds": int64(20), "failureThreshold": int64(3)},
		"securityContext": M{"allowPrivilegeEscalation": false, "capabilities": M{"drop": A{"ALL"}}},
		"volumeMounts":    A{M{"name": "sources", "mountPath": sourcesDir, "readOnly": true}},
	}
	if spec.ImagePullPolicy != "" {
		container["imagePullPolicy"] = spec.ImagePullPolicy
	}
	if spec.Resources != nil {
		container["resources"] = spec.Resources
	} else {
		container["resources"] = M{"requests": M{"cpu": "1", "memory": "1Gi"}, "limits": M{"memory": "4Gi"}}
	}
	podSpec := M{
		"serviceAccountName":            childName(dpr.Name),
		"enableServiceLinks":            false,
		"terminationGracePeriodSeconds": int64(60),
		"securityContext": M{
			"runAsNonRoot": true, "runAsUser": int64(1000), "runAsGroup": int64(1000),
			"seccompProfile": M{"type": "RuntimeDefault"},
		},
		"containers": A{container},
		"volumes":    A{M{"name": "sources", "configMap": M{"name": childName(dpr.Name)}}},
	}
	// As the TypeScript's truthiness: an empty list or map is still given, an empty string is not.
	if spec.ImagePullSecrets != nil {
		podSpec["imagePullSecrets"] = spec.ImagePullSecrets
	}
	if spec.NodeSelector != nil {
		podSpec["nodeSelector"] = spec.NodeSelector
	}
	if spec.Tolerations != nil {
		podSpec["tolerations"] = spec.Tolerations
	}
	if spec.PriorityClassName != "" {
		podSpec["priorityClassName"] = spec.PriorityClassName
	}
	if spec.Affinity != nil {
		podSpec["affinity"] = spec.Affinity
	} else {
		podSpec["affinity"] = M{"podAntiAffinity": M{"preferredDuringSchedulingIgnoredDuringExecution": A{
			M{"weight": int64(100), "podAffinityTerm": M{"topologyKey": "kubernetes.io/hostname", "labelSelector": M{"matchLabels": selectorLabels(dpr.Name)}}},
		}}}
	}
	return M{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
		"spec": M{
			"replicas":             spec.Replicas,
			"revisionHistoryLimit": int64(3),
			"selector":             M{"matchLabels": selectorLabels(dpr.Name)},
			"strategy":             M{"type": "RollingUpdate", "rollingUpdate": M{"maxSurge": int64(1), "maxUnavailable": int64(0)}},
			"template": M{
				"metadata": M{"labels": withDiscoveryLabels(commonLabels(dpr.Name))},
				"spec":     podSpec,
			},
		},
	}
}

func renderService(dpr *DPR) M {
	return M{
		"apiVersion": "v1", "kind": "Service", "metadata": childMeta(dpr, true),
		"spec": M{
			"type":                     "ClusterIP",
			"selector":                 selectorLabels(dpr.Name),
			"publishNotReadyAddresses": false,
			"ports":                    A{M{"name": "grpc", "port": int64(grpcPort), "targetPort": "grpc", "protocol": "TCP", "appProtocol": "kubernetes.io/h2c"}},
		},
	}
}

// withAppliedHash adds the hash of the object as rendered to its annotations.
func withAppliedHash(obj M) M {
	hash := sha256Hex(stableJSON(obj))
	meta := obj["metadata"].(M)
	annotations, _ := meta["annotations"].(M)
	if annotations == nil {
		annotations = M{}
	}
	annotations[appliedHashAnnotation] = hash
	meta["annotations"] = annotations
	return obj
}

// desiredChildren is shared/apply-plan.ts's: the six children in apply order, each with its hash.
func desiredChildren(d Decision) []M {
	children := []M{
		renderServiceAccount(d.DPR), renderRole(d.DPR), renderRoleBinding(d.DPR),
		renderConfigMap(d), renderDeployment(d), renderService(d.DPR),
	}
	for _, c := range children {
		withAppliedHash(c)
	}
	return children
}
