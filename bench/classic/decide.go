// The reconcile decision, as shared/decide.ts makes it: reject an invalid DynamoPoolRelay, withdraw
// the Service of an ineligible one, or apply its children. Ported from shared/decide.ts,
// shared/eligibility.ts, shared/worker-namespaces.ts, shared/connection-revision.ts and
// shared/sources-document.ts; the zod schemas of shared/api/ become the checks below.
package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

type Settings struct {
	// The Dynamo operator's discovery backend: kubernetes unless configured otherwise.
	DiscoveryBackend string
	// The Relay container's command (RELAY_COMMAND).
	RelayCommand []string
}

// DPR is a DynamoPoolRelay as the zod schema parses it: the fields the product renders from.
type DPR struct {
	Name, Namespace, UID string
	Generation           int64
	HasGeneration        bool
	Spec                 Spec
	// Status as stored (nil when there is none).
	Status M
}

// Spec holds what DynamoPoolRelaySpec parses to; a nil field is an absent one.
type Spec struct {
	Image, ImagePullPolicy, ClusterID, PriorityClassName string
	Replicas                                             int64
	Env                                                  A // each {name, value?, valueFrom?}
	ImagePullSecrets                                     A // each {name}
	Resources                                            M // {requests?, limits?}
	NodeSelector                                         M
	Tolerations                                          A
	Affinity                                             M
}

type Decision struct {
	Action  string // "apply", "withdraw" or "reject"
	DPR     *DPR
	Reason  string
	Message string
	// apply only
	WorkerNamespaces   []string
	RelayCommand       []string
	ConnectionRevision string
	SourcesText        string
	SourcesRevision    string
}

// issue is one zod issue: a dotted path and a message (shared/issues.ts).
type issue struct{ path, message string }

type issues []issue

func (is *issues) add(path, format string, args ...interface{}) {
	*is = append(*is, issue{path, fmt.Sprintf(format, args...)})
}

func (is issues) format(subject string) string {
	parts := make([]string, len(is))
	for i, x := range is {
		if x.path == "" {
			parts[i] = x.message
		} else {
			parts[i] = x.path + ": " + x.message
		}
	}
	return subject + " is invalid: " + strings.Join(parts, "; ")
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// jsType names a JSON value's type as zod's messages do.
func jsType(v interface{}) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64, int32, int:
		return "number"
	case float64:
		if x != x {
			return "NaN"
		}
		return "number"
	case []interface{}:
		return "array"
	case map[string]interface{}:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func isInt(v interface{}) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case int:
		return int64(x), true
	case float64:
		if x == float64(int64(x)) {
			return int64(x), true
		}
	}
	return 0, false
}

func missing(is *issues, path, want string) {
	is.add(path, "Invalid input: expected %s, received undefined", want)
}

func expected(is *issues, path, want string, got interface{}) {
	is.add(path, "Invalid input: expected %s, received %s", want, jsType(got))
}

// optString checks an optional string field; present reports whether it was given.
func optString(is *issues, obj M, key, path string) (string, bool) {
	v, ok := obj[key]
	if !ok {
		return "", false
	}
	s, isStr := v.(string)
	if !isStr {
		expected(is, join(path, key), "string", v)
		return "", false
	}
	return s, true
}

func stringLength(is *issues, path, s string, min, max int) {
	n := jsLength(s)
	if n < min {
		is.add(path, "Too small: expected string to have >=%d characters", min)
	}
	if max >= 0 && n > max {
		is.add(path, "Too big: expected string to have <=%d characters", max)
	}
}

func optStringMap(is *issues, obj M, key, path string) (M, bool) {
	v, ok := obj[key]
	if !ok {
		return nil, false
	}
	m, isMap := v.(map[string]interface{})
	if !isMap {
		expected(is, join(path, key), "record", v)
		return nil, false
	}
	for _, k := range sortedKeys(m) {
		if _, s := m[k].(string); !s {
			expected(is, join(join(path, key), k), "string", m[k])
		}
	}
	return m, true
}

var (
	noWhitespace   = regexp.MustCompile(`^\S+$`)
	trimmedNonZero = regexp.MustCompile(`^\S(.*\S)?$`)
	quantityText   = regexp.MustCompile(`^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?$`)
)

// metaOf checks ObjectMeta's fields the product reads.
func metaOf(is *issues, obj M) M {
	meta, ok := obj["metadata"].(map[string]interface{})
	if !ok {
		expected(is, "metadata", "object", obj["metadata"])
		return M{}
	}
	if name, given := optString(is, meta, "name", "metadata"); !given {
		if _, present := meta["name"]; !present {
			missing(is, "metadata.name", "string")
		}
	} else {
		stringLength(is, "metadata.name", name, 1, -1)
	}
	for _, key := range []string{"namespace", "uid", "resourceVersion", "deletionTimestamp"} {
		optString(is, meta, key, "metadata")
	}
	if g, present := meta["generation"]; present {
		if _, ok := isInt(g); !ok {
			expected(is, "metadata.generation", "int", g)
		}
	}
	optStringMap(is, meta, "labels", "metadata")
	optStringMap(is, meta, "annotations", "metadata")
	return meta
}

// parseDPR is DynamoPoolRelay.safeParse: the DynamoPoolRelay, or the issues that reject it.
func parseDPR(obj M) (*DPR, issues) {
	var is issues
	if obj["apiVersion"] != apiVersion {
		is.add("apiVersion", `Invalid input: expected "%s"`, apiVersion)
	}
	if obj["kind"] != kindDPR {
		is.add("kind", `Invalid input: expected "%s"`, kindDPR)
	}
	meta := metaOf(&is, obj)
	d := &DPR{}
	d.Name, _ = meta["name"].(string)
	d.Namespace, _ = meta["namespace"].(string)
	d.UID, _ = meta["uid"].(string)
	if g, ok := isInt(meta["generation"]); ok {
		d.Generation, d.HasGeneration = g, true
	}
	if st, ok := obj["status"].(map[string]interface{}); ok {
		d.Status = st
	}
	spec, ok := obj["spec"].(map[string]interface{})
	if !ok {
		expected(&is, "spec", "object", obj["spec"])
		return d, is
	}
	s := &d.Spec
	if image, given := optString(&is, spec, "image", "spec"); given {
		stringLength(&is, "spec.image", image, 1, 1024)
		if !noWhitespace.MatchString(image) {
			is.add("spec.image", "Invalid string: must match pattern /^\\S+$/")
		}
		s.Image = image
	} else if _, present := spec["image"]; !present {
		missing(&is, "spec.image", "string")
	}
	if p, given := optString(&is, spec, "imagePullPolicy", "spec"); given {
		if p != "Always" && p != "IfNotPresent" && p != "Never" {
			is.add("spec.imagePullPolicy", `Invalid option: expected one of "Always"|"IfNotPresent"|"Never"`)
		}
		s.ImagePullPolicy = p
	}
	if id, given := optString(&is, spec, "clusterID", "spec"); given {
		stringLength(&is, "spec.clusterID", id, 1, 256)
		if !trimmedNonZero.MatchString(id) {
			is.add("spec.clusterID", "Invalid string: must match pattern /^\\S(.*\\S)?$/")
		}
		s.ClusterID = id
	} else if _, present := spec["clusterID"]; !present {
		missing(&is, "spec.clusterID", "string")
	}
	s.Replicas = 2
	if r, present := spec["replicas"]; present {
		n, ok := isInt(r)
		switch {
		case !ok:
			expected(&is, "spec.replicas", "int", r)
		case n < 0:
			is.add("spec.replicas", "Too small: expected number to be >=0")
		case n > 2147483647:
			is.add("spec.replicas", "Too big: expected number to be <=2147483647")
		}
		s.Replicas = n
	}
	if v, present := spec["env"]; present {
		list, ok := v.([]interface{})
		if !ok {
			expected(&is, "spec.env", "array", v)
		} else {
			if len(list) > 128 {
				is.add("spec.env", "Too big: expected array to have <=128 items")
			}
			s.Env = A{}
			for i, e := range list {
				path := index("spec.env", i)
				item, ok := e.(map[string]interface{})
				if !ok {
					expected(&is, path, "object", e)
					continue
				}
				// z.object: only the known keys are kept.
				env := M{}
				if name, given := optString(&is, item, "name", path); given {
					stringLength(&is, join(path, "name"), name, 1, 256)
					env["name"] = name
					if reservedEnv[name] {
						is.add(path, "the product sets %s itself; remove it from spec.env", name)
					}
				} else if _, present := item["name"]; !present {
					missing(&is, join(path, "name"), "string")
				}
				if value, given := optString(&is, item, "value", path); given {
					env["value"] = value
				}
				if vf, present := item["valueFrom"]; present {
					if m, ok := vf.(map[string]interface{}); ok {
						env["valueFrom"] = m
					} else {
						expected(&is, join(path, "valueFrom"), "object", vf)
					}
				}
				s.Env = append(s.Env, env)
			}
		}
	}
	if v, present := spec["imagePullSecrets"]; present {
		list, ok := v.([]interface{})
		if !ok {
			expected(&is, "spec.imagePullSecrets", "array", v)
		} else {
			if len(list) > 32 {
				is.add("spec.imagePullSecrets", "Too big: expected array to have <=32 items")
			}
			s.ImagePullSecrets = A{}
			for i, e := range list {
				path := index("spec.imagePullSecrets", i)
				item, ok := e.(map[string]interface{})
				if !ok {
					expected(&is, path, "object", e)
					continue
				}
				name, given := optString(&is, item, "name", path)
				if given {
					stringLength(&is, join(path, "name"), name, 1, -1)
				} else if _, present := item["name"]; !present {
					missing(&is, join(path, "name"), "string")
				}
				s.ImagePullSecrets = append(s.ImagePullSecrets, M{"name": name})
			}
		}
	}
	if v, present := spec["resources"]; present {
		r, ok := v.(map[string]interface{})
		if !ok {
			expected(&is, "spec.resources", "object", v)
		} else {
			s.Resources = M{}
			for _, key := range []string{"requests", "limits"} {
				q, present := r[key]
				if !present {
					continue
				}
				qm, ok := q.(map[string]interface{})
				if !ok {
					expected(&is, "spec.resources."+key, "record", q)
					continue
				}
				for _, k := range sortedKeys(qm) {
					switch qv := qm[k].(type) {
					case string:
					default:
						if _, isI := isInt(qv); !isI {
							is.add("spec.resources."+key+"."+k, "Invalid input")
						}
					}
				}
				s.Resources[key] = qm
			}
		}
	}
	if m, given := optStringMap(&is, spec, "nodeSelector", "spec"); given {
		s.NodeSelector = m
	}
	if v, present := spec["tolerations"]; present {
		list, ok := v.([]interface{})
		if !ok {
			expected(&is, "spec.tolerations", "array", v)
		} else {
			if len(list) > 64 {
				is.add("spec.tolerations", "Too big: expected array to have <=64 items")
			}
			for i, e := range list {
				if _, ok := e.(map[string]interface{}); !ok {
					expected(&is, index("spec.tolerations", i), "object", e)
				}
			}
			s.Tolerations = list
		}
	}
	if v, present := spec["affinity"]; present {
		if m, ok := v.(map[string]interface{}); ok {
			s.Affinity = m
		} else {
			expected(&is, "spec.affinity", "object", v)
		}
	}
	if p, given := optString(&is, spec, "priorityClassName", "spec"); given {
		stringLength(&is, "spec.priorityClassName", p, 0, 253)
		s.PriorityClassName = p
	}
	if serviceNameProblem(d.Name) != "" {
		is.add("", "metadata.name must be a DNS-1035 label of at most 52 characters (lower-case letters, digits and '-', "+
			"starting with a letter, no dots) so that the Service <name>-pool-relay can exist")
	}
	return d, is
}

// component is a DGD component in either served shape (shared/api/dynamo-graph-deployment.ts).
type component struct {
	name        string
	typ         *string
	global      bool
	annotations M
}

func (c component) isWorker() bool {
	return c.typ != nil && (*c.typ == "worker" || *c.typ == "prefill" || *c.typ == "decode")
}

type DGD struct {
	Name, Namespace string
	Deleting        bool
	Annotations     M
	Components      []component
	// status.components[name].componentNames
	ComponentNames map[string][]string
}

func optBool(is *issues, obj M, key, path string) bool {
	v, present := obj[key]
	if !present {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		expected(is, join(path, key), "boolean", v)
	}
	return b
}

// parseDGD is DynamoGraphDeployment.safeParse: the parts the product reads, both shapes.
func parseDGD(obj M) (*DGD, issues) {
	var is issues
	if v := obj["apiVersion"]; v != "nvidia.com/v1beta1" && v != "nvidia.com/v1alpha1" {
		is.add("apiVersion", `Invalid option: expected one of "nvidia.com/v1beta1"|"nvidia.com/v1alpha1"`)
	}
	if obj["kind"] != "DynamoGraphDeployment" {
		is.add("kind", `Invalid input: expected "DynamoGraphDeployment"`)
	}
	meta := metaOf(&is, obj)
	d := &DGD{ComponentNames: map[string][]string{}}
	d.Name, _ = meta["name"].(string)
	d.Namespace, _ = meta["namespace"].(string)
	ts, _ := meta["deletionTimestamp"].(string)
	d.Deleting = ts != ""
	d.Annotations, _ = meta["annotations"].(map[string]interface{})
	if v, present := obj["spec"]; present {
		spec, ok := v.(map[string]interface{})
		if !ok {
			expected(&is, "spec", "object", v)
		} else {
			if cv, present := spec["components"]; present {
				list, ok := cv.([]interface{})
				if !ok {
					expected(&is, "spec.components", "array", cv)
				}
				for i, e := range list {
					path := index("spec.components", i)
					item, ok := e.(map[string]interface{})
					if !ok {
						expected(&is, path, "object", e)
						continue
					}
					c := component{annotations: M{}}
					if name, given := optString(&is, item, "name", path); given {
						stringLength(&is, join(path, "name"), name, 1, -1)
						c.name = name
					} else if _, present := item["name"]; !present {
						missing(&is, join(path, "name"), "string")
					}
					if t, given := optString(&is, item, "type", path); given {
						c.typ = &t
					}
					c.global = optBool(&is, item, "globalDynamoNamespace", path)
					if pt, present := item["podTemplate"]; present {
						ptm, ok := pt.(map[string]interface{})
						if !ok {
							expected(&is, join(path, "podTemplate"), "object", pt)
						} else if md, present := ptm["metadata"]; present {
							mdm, ok := md.(map[string]interface{})
							if !ok {
								expected(&is, join(path, "podTemplate.metadata"), "object", md)
							} else if a, given := optStringMap(&is, mdm, "annotations", join(path, "podTemplate.metadata")); given {
								c.annotations = a
							}
						}
					}
					d.Components = append(d.Components, c)
				}
			}
			if sv, present := spec["services"]; present {
				services, ok := sv.(map[string]interface{})
				if !ok {
					expected(&is, "spec.services", "record", sv)
				}
				// By name, as Object.entries(...).sort does.
				for _, name := range sortedKeys(services) {
					path := "spec.services." + name
					c := component{name: name, annotations: M{}}
					if services[name] != nil {
						item, ok := services[name].(map[string]interface{})
						if !ok {
							expected(&is, path, "object", services[name])
							continue
						}
						if t, given := optString(&is, item, "componentType", path); given {
							c.typ = &t
						}
						optString(&is, item, "subComponentType", path)
						c.global = optBool(&is, item, "globalDynamoNamespace", path)
						if a, given := optStringMap(&is, item, "annotations", path); given {
							c.annotations = a
						}
					}
					d.Components = append(d.Components, c)
				}
			}
		}
	}
	if v, present := obj["status"]; present {
		status, ok := v.(map[string]interface{})
		if !ok {
			expected(&is, "status", "object", v)
		} else if cv, present := status["components"]; present {
			comps, ok := cv.(map[string]interface{})
			if !ok {
				expected(&is, "status.components", "record", cv)
			}
			for _, name := range sortedKeys(comps) {
				path := "status.components." + name
				cs, ok := comps[name].(map[string]interface{})
				if !ok {
					expected(&is, path, "object", comps[name])
					continue
				}
				if nv, present := cs["componentNames"]; present {
					list, ok := nv.([]interface{})
					if !ok {
						expected(&is, join(path, "componentNames"), "array", nv)
						continue
					}
					names := []string{}
					for i, n := range list {
						s, ok := n.(string)
						if !ok {
							expected(&is, index(join(path, "componentNames"), i), "string", n)
						}
						names = append(names, s)
					}
					d.ComponentNames[name] = names
				}
			}
		}
	}
	return d, is
}

// --- eligibility (shared/eligibility.ts) ---

type resolved struct{ value, from string }

func annotated(key string, dgd *DGD, c *component) *resolved {
	if v, ok := dgd.Annotations[key].(string); ok {
		return &resolved{v, "the DynamoGraphDeployment's annotation " + key}
	}
	if c != nil {
		if v, ok := c.annotations[key].(string); ok {
			return &resolved{v, `component "` + c.name + `"'s annotation ` + key}
		}
	}
	return nil
}

func componentEligibility(dgd *DGD, c *component, s Settings) (reason, message string) {
	subject := "the DynamoGraphDeployment"
	if c != nil {
		subject = `worker component "` + c.name + `"`
	}
	backend := annotated(annotationDiscoveryBack, dgd, c)
	if backend == nil {
		backend = &resolved{s.DiscoveryBackend, "the operator's default backend"}
	}
	if backend.value != "kubernetes" && backend.value != "etcd" {
		return "UnknownDiscoveryBackend", fmt.Sprintf(`%s has discovery backend "%s" from %s; expected one of kubernetes, etcd`, subject, backend.value, backend.from)
	}
	if backend.value != "kubernetes" {
		return "DiscoveryBackendNotKubernetes", fmt.Sprintf(`%s uses discovery backend "%s" (from %s); the Relay needs Kubernetes discovery`, subject, backend.value, backend.from)
	}
	mode := annotated(annotationDiscoveryMode, dgd, c)
	if mode == nil {
		return "", ""
	}
	if mode.value != "pod" && mode.value != "container" {
		return "UnknownDiscoveryMode", fmt.Sprintf(`%s has Kubernetes discovery mode "%s" from %s; expected one of pod, container`, subject, mode.value, mode.from)
	}
	if mode.value != "pod" {
		return "DiscoveryModeNotPod", fmt.Sprintf(`%s uses Kubernetes discovery mode "%s" (from %s); the Relay needs Pod mode`, subject, mode.value, mode.from)
	}
	return "", ""
}

func (d *DGD) workers() []component {
	var ws []component
	for _, c := range d.Components {
		if c.isWorker() {
			ws = append(ws, c)
		}
	}
	return ws
}

// eligibility returns "" when the DGD named name can have a Relay, else the reason and message.
func eligibility(name string, dgd *DGD, s Settings) (reason, message string) {
	if p := serviceNameProblem(name); p != "" {
		return "InvalidServiceName", p
	}
	if dgd == nil {
		return "DGDNotFound", `DynamoGraphDeployment "` + name + `" does not exist in this namespace`
	}
	if dgd.Deleting {
		return "DGDDeleting", `DynamoGraphDeployment "` + name + `" is being deleted`
	}
	workers := dgd.workers()
	if len(workers) == 0 {
		return componentEligibility(dgd, nil, s)
	}
	for i := range workers {
		if r, m := componentEligibility(dgd, &workers[i], s); r != "" {
			return r, m
		}
	}
	return "", ""
}

// --- worker namespaces (shared/worker-namespaces.ts) ---

var hashPattern = regexp.MustCompile(`^[a-z0-9]+$`)

func baseNamespace(namespace, dgdName string) string {
	return namespace + "-" + strings.ReplaceAll(dgdName, ".", "-")
}

func workerNamespaces(dgd *DGD) []string {
	workers := dgd.workers()
	base := baseNamespace(dgd.Namespace, dgd.Name)
	var hashes []string
	for _, c := range workers {
		prefix := dgd.Name + "-" + strings.ToLower(c.name)
		for _, n := range dgd.ComponentNames[c.name] {
			if n == prefix {
				hashes = append(hashes, "")
			} else if strings.HasPrefix(n, prefix+"-") && hashPattern.MatchString(n[len(prefix)+1:]) {
				hashes = append(hashes, n[len(prefix)+1:])
			}
		}
	}
	for _, key := range []string{annotationWorkerHashV2, annotationWorkerHash} {
		if h, ok := dgd.Annotations[key].(string); ok && hashPattern.MatchString(h) {
			hashes = append(hashes, h)
		}
	}
	inBase := []string{base}
	if len(hashes) > 0 {
		inBase = inBase[:0]
		for _, h := range hashes {
			if h == "" {
				inBase = append(inBase, base)
			} else {
				inBase = append(inBase, base+"-"+h)
			}
		}
	}
	set := map[string]bool{}
	for _, c := range workers {
		if c.global {
			set[globalDynamoNS] = true
		} else {
			for _, n := range inBase {
				set[n] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out) // byte-wise, as compareBytes
	return out
}

// --- connection revision and sources document ---

func sameCommand(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func connectionRevision(spec Spec, command []string) string {
	env := spec.Env
	if env == nil {
		env = A{}
	}
	doc := M{
		"scheme":      "dynamo-pool-relay/connection/v1",
		"clusterID":   spec.ClusterID,
		"image":       spec.Image,
		"env":         env,
		"grpcPort":    int64(grpcPort),
		"sourcesPath": sourcesPath,
	}
	if !sameCommand(command, defaultRelayCommand) {
		cmd := make(A, len(command))
		for i, c := range command {
			cmd[i] = c
		}
		doc["command"] = cmd
	}
	return sha256Hex(stableJSON(doc))
}

// jsTrimmed is whether s.trim() === s: no leading or trailing JavaScript whitespace.
func jsTrimmed(s string) bool {
	isSpace := func(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' || unicode.Is(unicode.Zs, r) }
	return strings.TrimFunc(s, isSpace) == s
}

func valueProblem(what, value string) string {
	if value == "" {
		return what + " is empty"
	}
	if !utf8.ValidString(value) {
		return what + " " + jsString(value) + " holds an unpaired surrogate"
	}
	if len(value) > 512 {
		return what + " is longer than 512 bytes"
	}
	if !jsTrimmed(value) {
		return what + " " + jsString(value) + " has surrounding whitespace"
	}
	return ""
}

// sourcesDocument returns the canonical text, or a problem.
func sourcesDocument(namespaces []string, revision string) (string, string) {
	if len(namespaces) > 4096 {
		return "", fmt.Sprintf("%d worker namespaces exceed the Relay's limit of 4096 sources", len(namespaces))
	}
	sorted := append([]string(nil), namespaces...)
	sort.Strings(sorted)
	for i, n := range sorted {
		if p := valueProblem("worker namespace", n); p != "" {
			return "", p
		}
		if i > 0 && n == sorted[i-1] {
			return "", `worker namespace "` + n + `" is listed twice`
		}
	}
	if p := valueProblem("connectionRevision", revision); p != "" {
		return "", p
	}
	var b strings.Builder
	b.WriteString(`{"version":1,"connectionRevision":`)
	b.WriteString(jsString(revision))
	b.WriteString(`,"sources":[`)
	for i, n := range sorted {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"namespace":`)
		b.WriteString(jsString(n))
		b.WriteByte('}')
	}
	b.WriteString("]}")
	text := goEscape(b.String())
	if len(text) > 1024*1024 {
		return "", fmt.Sprintf("the sources document is %d bytes, over the Relay's limit of 1048576", len(text))
	}
	return text, ""
}

func objectKey(obj M) string {
	meta, _ := obj["metadata"].(map[string]interface{})
	ns, _ := meta["namespace"].(string)
	name, _ := meta["name"].(string)
	return ns + "/" + name
}

// decide is shared/decide.ts's decide: rawDGD is nil when there is no DGD of the name.
func decide(rawDPR, rawDGD M, s Settings) Decision {
	dpr, is := parseDPR(rawDPR)
	if len(is) > 0 {
		return Decision{Action: "reject", DPR: dpr, Reason: "InvalidSpec", Message: is.format("DynamoPoolRelay " + objectKey(rawDPR))}
	}
	var dgd *DGD
	if rawDGD != nil {
		parsed, is := parseDGD(rawDGD)
		if len(is) > 0 {
			return Decision{Action: "withdraw", DPR: dpr, Reason: "InvalidDGD", Message: is.format("DynamoGraphDeployment " + objectKey(rawDGD))}
		}
		dgd = parsed
	}
	if reason, message := eligibility(dpr.Name, dgd, s); reason != "" {
		return Decision{Action: "withdraw", DPR: dpr, Reason: reason, Message: message}
	}
	namespaces := workerNamespaces(dgd)
	revision := connectionRevision(dpr.Spec, s.RelayCommand)
	text, problem := sourcesDocument(namespaces, revision)
	if problem != "" {
		return Decision{Action: "withdraw", DPR: dpr, Reason: "SourcesLimitExceeded", Message: problem}
	}
	return Decision{
		Action: "apply", DPR: dpr, WorkerNamespaces: namespaces, RelayCommand: s.RelayCommand,
		ConnectionRevision: revision, SourcesText: text, SourcesRevision: sha256Hex(text),
	}
}
