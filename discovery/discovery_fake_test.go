package discovery_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/listwatch/listwatch/testkit/apitest"
	"github.com/stretchr/testify/require"
)

// discoveryMode is the discovery a fake server serves, as servers of
// different releases do.
type discoveryMode string

const (
	legacyDiscovery  discoveryMode = "legacy"  // before 1.26, or aggregated turned off
	v2beta1Discovery discoveryMode = "v2beta1" // 1.26 to 1.29
	v2Discovery      discoveryMode = "v2"      // since 1.30
)

// fakeDiscovery serves the recorded kube-apiserver's discovery (trimmed to
// the core and apps groups) plus metrics.k8s.io/v1beta1, an aggregated API
// that answers 503 until metricsUp is set, as metrics-server does when it
// is down; while apisDown is set, /apis itself answers 503. Objects:
// nodes/node-1 is missing (a 404 naming it); every other path gets the
// server's 404 for a path it has no handler for.
type fakeDiscovery struct {
	*apitest.Server
	metricsUp atomic.Bool
	apisDown  atomic.Bool
	// hold, if set, is called with each request's path before it is
	// answered.
	hold atomic.Pointer[func(path string)]
}

const metricsResources = `[
	{"name":"nodes","singularName":"","namespaced":false,"kind":"NodeMetrics","verbs":["get","list"]},
	{"name":"pods","singularName":"","namespaced":true,"kind":"PodMetrics","verbs":["get","list"]}]`

func newFakeDiscovery(t *testing.T, mode discoveryMode) *fakeDiscovery {
	t.Helper()
	f := &fakeDiscovery{}
	legacyAPIs := trimmedGroups(t, fixtures.Load(t, "discovery-apis.json").Body, "groups", func(g map[string]any) bool { return g["name"] == "apps" })
	legacyAPIs = addJSON(t, legacyAPIs, "groups", `{"name":"metrics.k8s.io","versions":[{"groupVersion":"metrics.k8s.io/v1beta1","version":"v1beta1"}],
		"preferredVersion":{"groupVersion":"metrics.k8s.io/v1beta1","version":"v1beta1"}}`)
	aggregatedAPI := withAPIVersion(t, fixtures.Load(t, "discovery-api-aggregated.json").Body, mode)
	aggregatedAPIs := trimmedGroups(t, fixtures.Load(t, "discovery-apis-aggregated.json").Body, "items", func(g map[string]any) bool {
		return g["metadata"].(map[string]any)["name"] == "apps"
	})
	aggregatedAPIs = withAPIVersion(t, aggregatedAPIs, mode)
	metricsItem := func() string {
		if !f.metricsUp.Load() {
			return `{"metadata":{"name":"metrics.k8s.io"},"versions":[{"version":"v1beta1","resources":[],"freshness":"Stale"}]}`
		}
		return `{"metadata":{"name":"metrics.k8s.io"},"versions":[{"version":"v1beta1","freshness":"Current","resources":[
			{"resource":"nodes","responseKind":{"kind":"NodeMetrics"},"scope":"Cluster","verbs":["get","list"]},
			{"resource":"pods","responseKind":{"kind":"PodMetrics"},"scope":"Namespaced","verbs":["get","list"]}]}]}`
	}
	f.Server = apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		if hold := f.hold.Load(); hold != nil {
			(*hold)(r.URL.Path)
		}
		accept := r.Header.Get("Accept")
		aggregated := mode != legacyDiscovery && strings.Contains(accept, "g=apidiscovery.k8s.io;v="+string(mode)+";")
		metricsDown := !f.metricsUp.Load() && strings.HasPrefix(r.URL.Path, "/apis/metrics.k8s.io/v1beta1")
		switch p := r.URL.Path; {
		case p == "/apis" && f.apisDown.Load():
			serviceUnavailable(w)
		case p == "/api" && aggregated:
			serveJSON(w, aggregatedAPI, "application/json;g=apidiscovery.k8s.io;v="+string(mode)+";as=APIGroupDiscoveryList")
		case p == "/apis" && aggregated:
			serveJSON(w, addJSON(t, aggregatedAPIs, "items", metricsItem()), "application/json;g=apidiscovery.k8s.io;v="+string(mode)+";as=APIGroupDiscoveryList")
		case p == "/api":
			fixtures.Load(t, "discovery-api.json").ServeHTTP(w, r)
		case p == "/apis":
			serveJSON(w, legacyAPIs, "application/json")
		case p == "/api/v1":
			fixtures.Load(t, "discovery-api-v1.json").ServeHTTP(w, r)
		case p == "/apis/apps/v1":
			fixtures.Load(t, "discovery-apis-apps-v1.json").ServeHTTP(w, r)
		case metricsDown && (p == "/apis/metrics.k8s.io/v1beta1" || strings.HasSuffix(p, "/pods") || strings.Contains(p, "/pods/")):
			serviceUnavailable(w)
		case p == "/apis/metrics.k8s.io/v1beta1":
			serveJSON(w, []byte(`{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"metrics.k8s.io/v1beta1","resources":`+metricsResources+`}`), "application/json")
		case p == "/api/v1/nodes/node-1":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"nodes \"node-1\" not found","reason":"NotFound","details":{"name":"node-1","kind":"nodes"},"code":404}`)
		default:
			fixtures.Load(t, "list-unknown-resource.json").ServeHTTP(w, r)
		}
	})
	return f
}

// discoveryReads counts the requests for discovery documents so far.
func (f *fakeDiscovery) discoveryReads() int { return len(f.discoveryPaths()) }

// discoveryPaths lists the discovery documents requested so far, oldest
// first.
func (f *fakeDiscovery) discoveryPaths() []string {
	var paths []string
	for _, r := range f.Requests() {
		switch r.URL.Path {
		case "/api", "/apis", "/api/v1", "/apis/apps/v1", "/apis/metrics.k8s.io/v1beta1":
			paths = append(paths, r.URL.Path)
		}
	}
	return paths
}

func serviceUnavailable(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusServiceUnavailable)
	io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"service unavailable","reason":"ServiceUnavailable","code":503}`)
}

func serveJSON(w http.ResponseWriter, body []byte, contentType string) {
	w.Header().Set("Content-Type", contentType)
	w.Write(body)
}

// trimmedGroups keeps the elements of list field that keep accepts.
func trimmedGroups(t *testing.T, body []byte, field string, keep func(map[string]any) bool) []byte {
	var doc map[string]any
	require.NoError(t, json.Unmarshal(body, &doc))
	var kept []any
	for _, g := range doc[field].([]any) {
		if keep(g.(map[string]any)) {
			kept = append(kept, g)
		}
	}
	doc[field] = kept
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}

// addJSON appends the JSON object elem to list field.
func addJSON(t *testing.T, body []byte, field, elem string) []byte {
	var doc map[string]any
	require.NoError(t, json.Unmarshal(body, &doc))
	var e any
	require.NoError(t, json.Unmarshal([]byte(elem), &e))
	doc[field] = append(doc[field].([]any), e)
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}

// withAPIVersion labels an aggregated document with the mode's version
// (v2beta1 has the same shape as v2).
func withAPIVersion(t *testing.T, body []byte, mode discoveryMode) []byte {
	var doc map[string]any
	require.NoError(t, json.Unmarshal(body, &doc))
	doc["apiVersion"] = "apidiscovery.k8s.io/" + string(mode)
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}
