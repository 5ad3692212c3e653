// Names, labels and fixed values, as shared/names.ts and shared/relay-env.ts have them.
package main

import (
	"regexp"
	"unicode/utf16"
)

// M and A are the JSON shapes every rendered object and status is built from, so that the
// comparisons (isSubset, stableJSON) see one set of types, as the TypeScript sees JSON.
type (
	M = map[string]interface{}
	A = []interface{}
)

const (
	group      = "nvidia.com"
	apiVersion = "nvidia.com/v1alpha1"
	kindDPR    = "DynamoPoolRelay"
	product    = "dynamo-pool-relay"
	// The classic peer's own field manager (the product applies as dynamo-pool-relay/apply).
	fieldManager = "dynamo-pool-relay/classic"

	serviceSuffix    = "-pool-relay"
	maxDGDNameLength = 63 - len(serviceSuffix)

	grpcPort       = 5561
	systemPort     = 8081
	grpcService    = "dynamo.kvrelay.v1.KvEventRelay"
	sourcesKey     = "sources.json"
	sourcesDir     = "/etc/pool-relay"
	sourcesPath    = sourcesDir + "/" + sourcesKey
	containerName  = "relay"
	globalDynamoNS = "dynamo"

	labelName               = "app.kubernetes.io/name"
	labelInstance           = "app.kubernetes.io/instance"
	labelComponent          = "app.kubernetes.io/component"
	labelManagedBy          = "app.kubernetes.io/managed-by"
	labelPartOf             = "app.kubernetes.io/part-of"
	labelDGDName            = "nvidia.com/dynamo-graph-deployment-name"
	labelDiscoveryBackend   = "nvidia.com/dynamo-discovery-backend"
	labelDiscoveryEnabled   = "nvidia.com/dynamo-discovery-enabled"
	labelSinkBindingExclude = "bindings.knative.dev/exclude"
	annotationDiscoveryBack = "nvidia.com/dynamo-discovery-backend"
	annotationDiscoveryMode = "nvidia.com/dynamo-kube-discovery-mode"
	annotationWorkerHash    = "nvidia.com/current-worker-hash"
	annotationWorkerHashV2  = "nvidia.com/current-worker-hash-v2"
	appliedHashAnnotation   = "poolrelay.dynamo.nvidia.com/applied-hash"
	serviceNameLabel        = "kubernetes.io/service-name"

	envDCID               = "DYN_DC_ID"
	envConnectionRevision = "DYN_RELAY_CONNECTION_REVISION"
	envDiscoveryBackend   = "DYN_DISCOVERY_BACKEND"
	envDiscoveryMode      = "DYN_KUBE_DISCOVERY_MODE"
	envNamespace          = "DYN_NAMESPACE"
	envSystemPort         = "DYN_SYSTEM_PORT"
	envPodName            = "POD_NAME"
	envPodNamespace       = "POD_NAMESPACE"
	envPodUID             = "POD_UID"
)

var (
	dns1035Label        = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	defaultRelayCommand = []string{"python3", "-m", "dynamo.kv_dc_relay"}
	// The names the product sets itself, and the Relay's scope settings: not allowed in spec.env.
	reservedEnv = map[string]bool{
		envDCID: true, envConnectionRevision: true, envDiscoveryBackend: true, envDiscoveryMode: true,
		envNamespace: true, envSystemPort: true, envPodName: true, envPodNamespace: true, envPodUID: true,
		"DYN_RELAY_BIND": true, "DYN_RELAY_NAMESPACES": true, "DYN_RELAY_WATCH_ALL": true, "DYN_RELAY_ENDPOINT_PREFIXES": true,
	}
)

func childName(dgdName string) string { return dgdName + serviceSuffix }

func serviceEndpoint(dgdName, namespace string) string {
	return childName(dgdName) + "." + namespace + ".svc:5561"
}

func selectorLabels(dgdName string) M {
	return M{labelName: product, labelInstance: dgdName}
}

func commonLabels(dgdName string) M {
	return M{
		labelName:      product,
		labelInstance:  dgdName,
		labelComponent: "pool-relay",
		labelManagedBy: product,
		labelPartOf:    "dynamo",
		labelDGDName:   dgdName,
	}
}

func withDiscoveryLabels(labels M) M {
	labels[labelDiscoveryBackend] = "kubernetes"
	labels[labelDiscoveryEnabled] = "true"
	return labels
}

// jsLength is String.prototype.length: UTF-16 code units.
func jsLength(s string) int { return len(utf16.Encode([]rune(s))) }

// serviceNameProblem is shared/api/dynamo-pool-relay.ts's: why a name cannot pair with a DGD.
func serviceNameProblem(name string) string {
	if jsLength(name) > maxDGDNameLength || !dns1035Label.MatchString(name) {
		return `the name "` + name + `" cannot form the Service name "` + name + serviceSuffix + `": it must be a DNS-1035 label ` +
			"of at most 52 characters (lower-case letters, digits and '-', starting with a letter, no dots)"
	}
	return ""
}
