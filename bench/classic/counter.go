// A count of the API requests this process sends, by verb, from a wrapper around the
// rest.Config's transport: every request the manager's client, cache and discovery send.
package main

import (
	"net/http"
	"strings"
	"sync"
)

type requestCounter struct {
	mu        sync.Mutex
	total     int64
	byVerb    map[string]int64
	byStatus  map[string]int64
	discovery int64
}

func newRequestCounter() *requestCounter {
	return &requestCounter{byVerb: map[string]int64{}, byStatus: map[string]int64{}}
}

type countingTransport struct {
	next    http.RoundTripper
	counter *requestCounter
}

func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return &countingTransport{next: rt, counter: c}
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	verb, discovery := kubeVerb(req)
	resp, err := t.next.RoundTrip(req)
	status := "error"
	if err == nil {
		status = http.StatusText(resp.StatusCode)
		if status == "" {
			status = "other"
		}
		status = strings.ReplaceAll(strings.ToLower(status), " ", "")
	}
	c := t.counter
	c.mu.Lock()
	c.total++
	c.byVerb[verb]++
	if discovery {
		c.discovery++
	}
	c.byStatus[status]++
	c.mu.Unlock()
	return resp, err
}

// kubeVerb names a request as the API server's audit log would: get, list, watch, create,
// update, patch, delete, deletecollection. A GET of a path that names no resource (discovery,
// /version) counts as get, and is also counted as discovery.
func kubeVerb(req *http.Request) (string, bool) {
	switch req.Method {
	case http.MethodPost:
		return "create", false
	case http.MethodPut:
		return "update", false
	case http.MethodPatch:
		return "patch", false
	}
	segments := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	// /api/v1/... or /apis/group/version/...
	var rest []string
	switch {
	case len(segments) >= 2 && segments[0] == "api":
		rest = segments[2:]
	case len(segments) >= 3 && segments[0] == "apis":
		rest = segments[3:]
	default:
		return strings.ToLower(req.Method), req.Method == http.MethodGet
	}
	if len(rest) == 0 {
		return strings.ToLower(req.Method), req.Method == http.MethodGet
	}
	if len(rest) >= 3 && rest[0] == "namespaces" {
		rest = rest[2:] // namespaces/<ns>/<resource>...
	}
	collection := len(rest) == 1
	if req.Method == http.MethodDelete {
		if collection {
			return "deletecollection", false
		}
		return "delete", false
	}
	if req.Method != http.MethodGet {
		return strings.ToLower(req.Method), false
	}
	if w := req.URL.Query().Get("watch"); w == "true" || w == "1" {
		return "watch", false
	}
	if collection {
		return "list", false
	}
	return "get", false
}

type report struct {
	Requests     int64            `json:"requests"`
	ByVerb       map[string]int64 `json:"byVerb"`
	ByStatus     map[string]int64 `json:"byStatus"`
	Discovery    int64            `json:"discovery"`
	Reconciles   int64            `json:"reconciles"`
	Conflicts    int64            `json:"conflicts"`
	ChildApplies int64            `json:"childApplies"`
	Deletes      int64            `json:"serviceDeletes"`
	StatusWrites int64            `json:"statusWrites"`
	CPUSeconds   float64          `json:"cpuSeconds"`
}

func (c *requestCounter) snapshot() report {
	c.mu.Lock()
	defer c.mu.Unlock()
	byVerb, byStatus := map[string]int64{}, map[string]int64{}
	for k, v := range c.byVerb {
		byVerb[k] = v
	}
	for k, v := range c.byStatus {
		byStatus[k] = v
	}
	return report{Requests: c.total, ByVerb: byVerb, ByStatus: byStatus, Discovery: c.discovery}
}
