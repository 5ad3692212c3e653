// Parity with the TypeScript product: testdata/cases.json records what shared/ decides, renders
// and computes as status (testdata/generate.ts); the port must give the very same JSON.
package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

type scenario struct {
	Name           string `json:"name"`
	ReadyEndpoints int    `json:"readyEndpoints"`
	Refused        string `json:"refused"`
	Status         M      `json:"status"`
	Write          bool   `json:"write"`
	Reflects       bool   `json:"reflects"`
}

type parityCase struct {
	Name     string      `json:"name"`
	Settings string      `json:"settings"`
	DPR      M           `json:"dpr"`
	DGD      M           `json:"dgd"`
	Decision M           `json:"decision"`
	Desired  [][2]string `json:"desired"` // kind, applied hash
	Cases    []scenario  `json:"scenarios"`
}

// decodeJSON decodes as the API machinery does: integers as int64, other numbers as float64.
func decodeJSON(t *testing.T, data []byte, into interface{}) {
	t.Helper()
	var raw interface{}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		t.Fatal(err)
	}
	fixed := fixNumbers(raw)
	again, _ := json.Marshal(fixed)
	if err := json.Unmarshal(again, into); err != nil {
		t.Fatal(err)
	}
	// json.Unmarshal into M turns numbers into float64 again: walk the result once more.
	walkFix(into)
}

func fixNumbers(v interface{}) interface{} {
	switch x := v.(type) {
	case map[string]interface{}:
		for k, e := range x {
			x[k] = fixNumbers(e)
		}
	case []interface{}:
		for i, e := range x {
			x[i] = fixNumbers(e)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

func walkFix(v interface{}) {
	switch x := v.(type) {
	case *struct {
		Now   string       `json:"now"`
		Cases []parityCase `json:"cases"`
	}:
		for i := range x.Cases {
			c := &x.Cases[i]
			c.DPR, _ = intsOf(c.DPR).(M)
			c.DGD, _ = intsOf(c.DGD).(M)
			c.Decision, _ = intsOf(c.Decision).(M)
			for j := range c.Cases {
				c.Cases[j].Status, _ = intsOf(c.Cases[j].Status).(M)
			}
		}
	}
}

func intsOf(v interface{}) interface{} {
	switch x := v.(type) {
	case map[string]interface{}:
		for k, e := range x {
			x[k] = intsOf(e)
		}
		return x
	case []interface{}:
		for i, e := range x {
			x[i] = intsOf(e)
		}
		return x
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	}
	return v
}

// observed builds the scenario's children as generate.ts does.
func observed(t *testing.T, name string, desired []M, decision Decision, uid string) liveChildren {
	stored := func() liveChildren {
		live := liveChildren{}
		for i, d := range desired {
			c := runtime.DeepCopyJSON(d)
			meta := c["metadata"].(map[string]interface{})
			meta["resourceVersion"] = jsNumber(float64(100 + i))
			meta["generation"] = int64(1)
			live[kindOf(d)] = c
		}
		return live
	}
	rolled := M{"observedGeneration": int64(1), "replicas": int64(2), "updatedReplicas": int64(2), "readyReplicas": int64(2), "availableReplicas": int64(2)}
	none := func() liveChildren {
		live := liveChildren{}
		for _, d := range desired {
			live[kindOf(d)] = nil
		}
		return live
	}
	switch name {
	case "all current, rolled out, listening":
		live := stored()
		live["Deployment"]["status"] = rolled
		return live
	case "all current, not rolled out":
		return stored()
	case "none yet", "refused":
		return none()
	case "foreign ServiceAccount and Service":
		live := stored()
		live["ServiceAccount"]["metadata"].(map[string]interface{})["ownerReferences"] = A{}
		live["Service"]["metadata"].(map[string]interface{})["ownerReferences"] = A{M{"uid": "other", "controller": true}}
		return live
	case "stale Deployment":
		live := stored()
		live["Deployment"]["spec"].(map[string]interface{})["replicas"] = int64(7)
		return live
	case "quantities in another form":
		live := stored()
		dep := live["Deployment"]
		c := dep["spec"].(M)["template"].(M)["spec"].(M)["containers"].(A)[0].(M)
		c["resources"] = M{"requests": M{"cpu": "1000m", "memory": "1024Mi"}, "limits": M{"memory": "4096Mi"}}
		dep["status"] = rolled
		return live
	case "our Service still there":
		return liveChildren{"Deployment": nil, "Service": M{"apiVersion": "v1", "kind": "Service", "metadata": M{
			"name": "x-pool-relay", "uid": "svc-uid", "ownerReferences": A{M{"uid": uid, "controller": true}},
		}}}
	case "Service gone":
		return liveChildren{"Deployment": nil, "Service": nil}
	case "rejected":
		return liveChildren{}
	}
	t.Fatalf("unknown scenario %q", name)
	return nil
}

func TestParityWithTheProduct(t *testing.T) {
	data, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Now   string       `json:"now"`
		Cases []parityCase `json:"cases"`
	}
	decodeJSON(t, data, &file)
	if len(file.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range file.Cases {
		t.Run(c.Name, func(t *testing.T) {
			settings := Settings{DiscoveryBackend: "kubernetes", RelayCommand: defaultRelayCommand}
			if c.Settings == "custom" {
				settings = Settings{DiscoveryBackend: "etcd", RelayCommand: []string{"/bin/relay", "--x"}}
			}
			var rawDGD M
			if c.DGD != nil {
				rawDGD = runtime.DeepCopyJSON(c.DGD)
			}
			d := decide(runtime.DeepCopyJSON(c.DPR), rawDGD, settings)
			want := c.Decision
			if d.Action != want["action"] {
				t.Fatalf("action %s, the product's %v (%v)", d.Action, want["action"], want["message"])
			}
			if d.Action != "apply" {
				if d.Reason != want["reason"] {
					t.Errorf("reason %s, the product's %v", d.Reason, want["reason"])
				}
				if d.Action == "withdraw" && d.Reason != "InvalidDGD" && d.Message != want["message"] {
					t.Errorf("message\n %s\nthe product's\n %v", d.Message, want["message"])
				}
			} else {
				sources := want["sources"].(M)
				if d.SourcesText != sources["text"] || d.SourcesRevision != sources["revision"] || d.ConnectionRevision != want["connectionRevision"] {
					t.Errorf("sources %s (%s, connection %s), the product's %v (%v, connection %v)", d.SourcesText, d.SourcesRevision, d.ConnectionRevision, sources["text"], sources["revision"], want["connectionRevision"])
				}
			}
			var desired []M
			if d.Action == "apply" {
				desired = desiredChildren(d)
			}
			if len(desired) != len(c.Desired) {
				t.Fatalf("%d children, the product's %d", len(desired), len(c.Desired))
			}
			for i := range desired {
				hash, _ := annotationOf(desired[i], appliedHashAnnotation)
				if kindOf(desired[i]) != c.Desired[i][0] || hash != c.Desired[i][1] {
					t.Errorf("%s differs from the product's %s (hash %s, the product's %s); the port renders\n%s", kindOf(desired[i]), c.Desired[i][0], hash, c.Desired[i][1], stableJSON(desired[i]))
				}
			}
			for _, s := range c.Cases {
				live := observed(t, s.Name, desired, d, d.DPR.UID)
				plan := planStatus(planInput{dpr: d.DPR, decision: d, desired: desired, live: live, readyEndpoints: s.ReadyEndpoints, refused: s.Refused, now: file.Now})
				if d.Action == "reject" {
					// The message words zod's issues; the port words its own.
					readyOf := func(st M) M { return st["conditions"].([]interface{})[0].(M) }
					readyOf(plan.status)["message"], readyOf(s.Status)["message"] = "", ""
				}
				if got, want := stableJSON(plan.status), stableJSON(s.Status); got != want || plan.write != s.Write || plan.reflects != s.Reflects {
					t.Errorf("%s: status (write %v, reflects %v)\n got  %s\n want %s (write %v, reflects %v)", s.Name, plan.write, plan.reflects, got, want, s.Write, s.Reflects)
				}
			}
		})
	}
}

func TestJSNumber(t *testing.T) {
	for f, want := range map[float64]string{0: "0", 1: "1", -2.5: "-2.5", 1e21: "1e+21", 1.5e-7: "1.5e-7", 123456789012: "123456789012", 0.000001: "0.000001"} {
		if got := jsNumber(f); got != want {
			t.Errorf("jsNumber(%v) = %s, want %s", f, got, want)
		}
	}
}

func TestKubeVerb(t *testing.T) {
	for path, want := range map[string]string{
		"GET /api/v1/namespaces/a/configmaps":                              "list",
		"GET /api/v1/namespaces/a/configmaps?watch=true":                   "watch",
		"GET /api/v1/namespaces/a/configmaps/x":                            "get",
		"GET /api/v1/namespaces/a":                                         "get",
		"GET /apis/apps/v1/namespaces/a/deployments/x":                     "get",
		"PUT /apis/nvidia.com/v1alpha1/namespaces/a/d/x/status":            "update",
		"PATCH /api/v1/namespaces/a/services/x":                            "patch",
		"DELETE /api/v1/namespaces/a/services/x":                           "delete",
		"GET /apis":                                                        "get",
		"GET /apis/discovery.k8s.io/v1/endpointslices?watch=1":             "watch",
		"GET /apis/nvidia.com/v1beta1/namespaces/a/dynamographdeployments": "list",
	} {
		t.Run(path, func(t *testing.T) {
			method, url, _ := bytes.Cut([]byte(path), []byte(" "))
			req, _ := newRequest(string(method), "https://h"+string(url))
			if got, _ := kubeVerb(req); got != want {
				t.Errorf("%s: %s, want %s", path, got, want)
			}
		})
	}
}

func newRequest(method, url string) (*http.Request, error) { return http.NewRequest(method, url, nil) }
