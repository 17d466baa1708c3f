package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/watchtest"
)

// writeStep is one raw request sent to both servers, and what of the two
// answers must agree.
type writeStep struct {
	name, method, path, ct, body string
	// same lists gjson paths whose values must be equal in both answers;
	// the status code always must be.
	same []string
}

// diffStep is a writeStep with what reads need besides.
type diffStep struct {
	writeStep
	// accept is the Accept header, if any.
	accept string
	// save keeps values of each server's answer, by gjson path, as
	// variables later steps name as {NAME}.
	save map[string]string
	// before, if set, runs before the step is sent: to put watchtest
	// where the real server is by itself (compacted history, say).
	before func()
}

func plain(steps []writeStep) []diffStep {
	out := make([]diffStep, len(steps))
	for i, st := range steps {
		out[i] = diffStep{writeStep: st}
	}
	return out
}

// rawServer sends requests to one server.
type rawServer struct {
	name string
	base string
	hc   *http.Client
	// vars are values of this server's earlier answers (resourceVersions,
	// continue tokens) that steps name as {NAME} in their paths and
	// bodies.
	vars map[string]string
}

func (s rawServer) do(t *testing.T, st writeStep, ns string) (int, gjson.Result) {
	t.Helper()
	return s.send(t, diffStep{writeStep: st}, ns)
}

func (s rawServer) send(t *testing.T, st diffStep, ns string) (int, gjson.Result) {
	t.Helper()
	path, body := strings.ReplaceAll(st.path, "NS", ns), st.body
	for k, v := range s.vars {
		path = strings.ReplaceAll(path, "{"+k+"}", v)
		body = strings.ReplaceAll(body, "{"+k+"}", v)
	}
	req, err := http.NewRequest(st.method, s.base+path, strings.NewReader(body))
	require.NoError(t, err)
	if st.ct != "" {
		req.Header.Set("Content-Type", st.ct)
	}
	if st.accept != "" {
		req.Header.Set("Accept", st.accept)
	}
	resp, err := s.hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if resp.StatusCode == http.StatusOK && req.URL.Query().Get("watch") != "" {
		b = eventArray(b)
	}
	answer := gjson.ParseBytes(b)
	for k, p := range st.save {
		s.vars[k] = url.QueryEscape(answer.Get(p).String())
	}
	return resp.StatusCode, answer
}

// eventArray turns a watch's stream of events, one JSON object a line,
// into one JSON array, for gjson paths such as "#.type".
func eventArray(stream []byte) []byte {
	out := []byte{'['}
	for _, line := range bytes.Split(bytes.TrimSpace(stream), []byte{'\n'}) {
		if len(line) == 0 {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, line...)
	}
	return append(out, ']')
}

const (
	mergeCT = "application/merge-patch+json"
	jsonCT  = "application/json-patch+json"
	applyCT = "application/apply-patch+yaml"
	smpCT   = "application/strategic-merge-patch+json"
)

// patchInvalid are the fields of a 422 for a patch whose result does not
// decode; its message quotes the whole patched object.
var patchInvalid = []string{"kind", "status", "reason", "code", "details.causes.0.field", "details.causes.0.reason"}

var statusFields = []string{"kind", "status", "reason", "message", "details.name", "details.kind", "details.group", "details.causes"}

// TestWatchtestWritesMatchRealServer sends the same writes to a real
// kube-apiserver and to watchtest and compares the answers: status codes,
// Status bodies and the fields the writes change, metadata.generation
// among them (a delete held by finalizers bumps it).
func TestWatchtestWritesMatchRealServer(t *testing.T) {
	cfg := config(t)
	rt, err := cfg.RoundTripper()
	require.NoError(t, err)
	ns := namespace(t, client(t))
	fake := watchtest.NewServer()
	defer fake.Close()
	servers := []rawServer{{"real", cfg.Host, &http.Client{Transport: rt}, map[string]string{}}, {"watchtest", fake.URL, fake.Client(), map[string]string{}}}

	cms := "/api/v1/namespaces/NS/configmaps"
	deps := "/apis/apps/v1/namespaces/NS/deployments"
	pods := "/api/v1/namespaces/NS/pods"
	dep := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","labels":{"a":"1"}},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`
	steps := []writeStep{
		{"create", "POST", cms, "application/json", `{"metadata":{"name":"a","labels":{"x":"1","del":"yes"}},"data":{"k":"v"}}`, []string{"metadata.labels", "data", "metadata.generation"}},
		// Decision 40: managedFields as the real server records them.
		{"create records its manager", "POST", cms + "?fieldManager=maker", "application/json", `{"metadata":{"name":"mf","labels":{"x":"1"}},"data":{"k":"v"}}`,
			[]string{"metadata.managedFields.#.manager", "metadata.managedFields.#.operation", "metadata.managedFields.#.apiVersion", "metadata.managedFields.#.fieldsType", "metadata.managedFields.0.fieldsV1"}},
		{"a patch adds its manager", "PATCH", cms + "/mf?fieldManager=patcher", mergeCT, `{"metadata":{"labels":{"y":"2"}},"data":{"k":"w"}}`,
			[]string{"metadata.managedFields.#.manager", "metadata.managedFields.#.operation", "metadata.managedFields.0.fieldsV1", "metadata.managedFields.1.fieldsV1"}},
		{"an apply conflicts with an update's field", "PATCH", cms + "/mf?fieldManager=applier", applyCT, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"mf"},"data":{"k":"z"}}`, append(statusFields, "message")},
		{"a label that is a number", "POST", cms, "application/json", `{"metadata":{"name":"n","labels":{"a":1}}}`, statusFields},
		{"patched to a numeric resourceVersion", "PATCH", cms + "/a", mergeCT, `{"metadata":{"resourceVersion":5}}`, patchInvalid},
		{"patched to a numeric annotation", "PATCH", cms + "/a", mergeCT, `{"metadata":{"annotations":{"x":true}}}`, patchInvalid},
		{"create existing", "POST", cms, "application/json", `{"metadata":{"name":"a"}}`, statusFields},
		{"merge patch", "PATCH", cms + "/a", mergeCT, `{"metadata":{"labels":{"y":"2","x":null}},"data":{"k2":"v2"}}`, []string{"metadata.labels", "data", "metadata.generation"}},
		{"strategic merge patch", "PATCH", cms + "/a", "application/strategic-merge-patch+json", `{"data":{"k3":"v3"}}`, []string{"data"}},
		{"json patch", "PATCH", cms + "/a", jsonCT, `[{"op":"copy","from":"/data/k","path":"/data/k4"},{"op":"move","from":"/data/k4","path":"/data/k5"},{"op":"replace","path":"/data/k","value":"w"},{"op":"test","path":"/data/k5","value":"v"}]`, []string{"data"}},
		{"json patch failed test", "PATCH", cms + "/a", jsonCT, `[{"op":"test","path":"/data/k","value":"nope"}]`, statusFields},
		{"json patch remove missing", "PATCH", cms + "/a", jsonCT, `[{"op":"remove","path":"/data/missing"}]`, statusFields},
		{"json patch copy of the whole object", "PATCH", cms + "/a", jsonCT, `[{"op":"copy","from":"","path":"/data/x"}]`, statusFields},
		{"stale resourceVersion", "PATCH", cms + "/a", mergeCT, `{"metadata":{"resourceVersion":"1"}}`, statusFields},
		{"stale update", "PUT", cms + "/a", "application/json", `{"metadata":{"name":"a","resourceVersion":"1"}}`, statusFields},
		{"update with another uid", "PUT", cms + "/a", "application/json", `{"metadata":{"name":"a","uid":"wrong"}}`, []string{"kind", "status", "reason", "details.name", "details.kind"}},
		{"patch changes uid", "PATCH", cms + "/a", mergeCT, `{"metadata":{"uid":"wrong"}}`, statusFields},
		{"json patch adds and removes a label", "PATCH", cms + "/a", jsonCT, `[{"op":"add","path":"/metadata/labels/tmp","value":"1"},{"op":"remove","path":"/metadata/labels/tmp"}]`, []string{"metadata.labels"}},
		{"patch missing", "PATCH", cms + "/missing", mergeCT, `{}`, statusFields},
		{"patch renames", "PATCH", cms + "/a", mergeCT, `{"metadata":{"name":"b"}}`, statusFields},
		{"unsupported media type", "PATCH", cms + "/a", "text/plain", `{}`, statusFields},
		{"apply without manager", "PATCH", cms + "/b", applyCT, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}`, statusFields},
		{"apply creates", "PATCH", cms + "/b?fieldManager=m1", applyCT, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  labels:\n    del: \"yes\"\ndata:\n  k: v\n", []string{"data"}},
		{"apply conflict", "PATCH", cms + "/b?fieldManager=m2", applyCT, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"},"data":{"k":"x"}}`, statusFields},
		{"apply force", "PATCH", cms + "/b?fieldManager=m2&force=true", applyCT, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"},"data":{"k":"x"}}`, []string{"data"}},
		{"apply drops a field", "PATCH", cms + "/b?fieldManager=m1", applyCT, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","labels":{"del":"yes"}},"data":{"j":"y"}}`, []string{"data"}},
		{"dry-run create", "POST", cms + "?dryRun=All", "application/json", `{"metadata":{"name":"dry"}}`, []string{"metadata.name", "metadata.resourceVersion"}},
		{"dry run did not create", "GET", cms + "/dry", "", "", statusFields},
		{"bad dryRun", "POST", cms + "?dryRun=Foo", "application/json", `{"metadata":{"name":"dry"}}`, statusFields},
		{"strict duplicate", "POST", cms + "?fieldValidation=Strict", "application/json", `{"metadata":{"name":"v"},"data":{"a":"b"},"data":{"c":"d"}}`, statusFields},
		{"strict unknown metadata", "POST", cms + "?fieldValidation=Strict", "application/json", `{"metadata":{"name":"v","bogus":1}}`, statusFields},
		{"delete precondition", "DELETE", cms + "/a", "application/json", `{"preconditions":{"resourceVersion":"1"}}`, []string{"kind", "status", "reason", "details.name", "details.kind"}},
		{"bad propagation", "DELETE", cms + "/a", "application/json", `{"propagationPolicy":"Bogus"}`, statusFields},
		{"delete", "DELETE", cms + "/a", "application/json", `{"propagationPolicy":"Background"}`, []string{"kind", "status", "details.name", "details.kind"}},
		{"delete collection", "DELETE", cms + "?labelSelector=del%3Dyes", "", "", []string{"kind", "items.#.metadata.name", "items.#.data"}},
		{"delete collection across namespaces", "DELETE", "/api/v1/configmaps?labelSelector=nothing%3Dhere", "", "", statusFields},
		{"create with a finalizer", "POST", cms, "application/json", `{"metadata":{"name":"fin","finalizers":["x.io/f"]}}`, []string{"metadata.finalizers"}},
		{"delete waits for it", "DELETE", cms + "/fin", "", "", []string{"metadata.finalizers", "metadata.deletionGracePeriodSeconds", "metadata.generation"}},
		{"delete again", "DELETE", cms + "/fin", "", "", []string{"metadata.finalizers", "metadata.deletionGracePeriodSeconds"}},
		{"removing it", "PATCH", cms + "/fin", mergeCT, `{"metadata":{"finalizers":null}}`, []string{"metadata.finalizers", "metadata.deletionGracePeriodSeconds"}},
		{"then it is gone", "GET", cms + "/fin", "", "", statusFields},
		{"create with a list", "POST", cms, "application/json", `{"metadata":{"name":"arr","finalizers":["a/1","a/2","a/3"]}}`, []string{"metadata.finalizers"}},
		{"test at index -1", "PATCH", cms + "/arr", jsonCT, `[{"op":"test","path":"/metadata/finalizers/-1","value":"a/3"}]`, []string{"metadata.finalizers"}},
		{"add at index -1", "PATCH", cms + "/arr", jsonCT, `[{"op":"add","path":"/metadata/finalizers/-1","value":"x/1"}]`, []string{"metadata.finalizers"}},
		{"replace at index -1", "PATCH", cms + "/arr", jsonCT, `[{"op":"replace","path":"/metadata/finalizers/-1","value":"y/1"}]`, []string{"metadata.finalizers"}},
		{"remove at index -1", "PATCH", cms + "/arr", jsonCT, `[{"op":"remove","path":"/metadata/finalizers/-1"}]`, []string{"metadata.finalizers"}},
		{"remove before the start", "PATCH", cms + "/arr", jsonCT, `[{"op":"remove","path":"/metadata/finalizers/-9"}]`, statusFields},
		{"test a missing member is null", "PATCH", cms + "/arr", jsonCT, `[{"op":"test","path":"/data","value":null}]`, []string{"metadata.finalizers"}},
		{"test below a missing member", "PATCH", cms + "/arr", jsonCT, `[{"op":"test","path":"/data/k","value":null}]`, statusFields},
		{"finalizers removed", "PATCH", cms + "/arr", mergeCT, `{"metadata":{"finalizers":null}}`, []string{"metadata.finalizers"}},
		{"create deployment", "POST", deps, "application/json", dep, []string{"metadata.labels", "spec.replicas", "metadata.generation"}},
		{"json patch test compares numbers as text", "PATCH", deps + "/d", jsonCT, `[{"op":"test","path":"/spec/replicas","value":2.0}]`, statusFields},
		{"a patch that changes nothing keeps the generation", "PATCH", deps + "/d", jsonCT, `[{"op":"test","path":"/spec/replicas","value":2}]`, []string{"metadata.generation", "spec.replicas"}},
		{"strategic merge adds a container", "PATCH", deps + "/d", smpCT, `{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"busybox"}]}}}}`, []string{"spec.template.spec.containers.#.name", "metadata.generation"}},
		{"strategic merge orders by the server's list", "PATCH", deps + "/d", smpCT, `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:2"},{"name":"z","image":"z"}]}}}}`, []string{"spec.template.spec.containers.#.name", "spec.template.spec.containers.#.image"}},
		{"strategic merge deletes an item", "PATCH", deps + "/d", smpCT, `{"spec":{"template":{"spec":{"containers":[{"name":"side","$patch":"delete"},{"name":"a","image":"a"}]}}}}`, []string{"spec.template.spec.containers.#.name"}},
		{"strategic merge sets the element order", "PATCH", deps + "/d", smpCT, `{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"z"},{"name":"c"}],"containers":[{"name":"c","image":"nginx:3"}]}}}}`, []string{"spec.template.spec.containers.#.name", "spec.template.spec.containers.#.image"}},
		{"strategic merge adds finalizers", "PATCH", deps + "/d", smpCT, `{"metadata":{"finalizers":["a.io/x","b.io/y","c.io/z"]}}`, []string{"metadata.finalizers", "metadata.generation"}},
		{"strategic merge deletes from a primitive list", "PATCH", deps + "/d", smpCT, `{"metadata":{"$deleteFromPrimitiveList/finalizers":["b.io/y"]}}`, []string{"metadata.finalizers"}},
		{"strategic merge retains keys", "PATCH", deps + "/d", smpCT, `{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}`, []string{"spec.strategy"}},
		{"strategic merge clears the finalizers", "PATCH", deps + "/d", smpCT, `{"metadata":{"finalizers":null}}`, []string{"metadata.finalizers"}},
		{"status put", "PUT", deps + "/d/status", "application/json", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","labels":{"a":"2"}},"spec":{"replicas":7},"status":{"replicas":3}}`, []string{"metadata.labels", "spec.replicas", "status.replicas"}},
		{"status patch", "PATCH", deps + "/d/status", mergeCT, `{"metadata":{"labels":{"b":"3"},"annotations":{"x":"y"}},"status":{"readyReplicas":1}}`, []string{"metadata.labels", "metadata.annotations", "status.replicas", "status.readyReplicas"}},
		{"main patch keeps status", "PATCH", deps + "/d", mergeCT, `{"spec":{"replicas":4},"status":{"readyReplicas":2}}`, []string{"spec.replicas", "status.readyReplicas", "metadata.generation"}},
		{"get scale", "GET", deps + "/d/scale", "", "", []string{"kind", "apiVersion", "spec.replicas", "status.replicas", "status.selector"}},
		{"put scale", "PUT", deps + "/d/scale", "application/json", `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"d"},"spec":{"replicas":6}}`, []string{"kind", "spec.replicas"}},
		{"patch scale", "PATCH", deps + "/d/scale", mergeCT, `{"spec":{"replicas":3}}`, []string{"kind", "spec.replicas"}},
		{"scale of missing", "GET", deps + "/nope/scale", "", "", statusFields},
		{"foreground delete", "DELETE", deps + "/d", "application/json", `{"propagationPolicy":"Foreground"}`, []string{"metadata.finalizers", "metadata.deletionGracePeriodSeconds", "metadata.generation"}},
		{"no status subresource", "GET", cms + "/b/status", "", "", statusFields},
		{"create pod", "POST", pods, "application/json", `{"metadata":{"name":"p","labels":{"a":"1"}},"spec":{"containers":[{"name":"c","image":"x"}]}}`, []string{"metadata.labels", "metadata.generation"}},
		{"pod status patch changes labels", "PATCH", pods + "/p/status", mergeCT, `{"metadata":{"labels":{"b":"3"}},"status":{"message":"hi"}}`, []string{"metadata.labels", "status.message"}},
		{"pod delete answers with the pod", "DELETE", pods + "/p?gracePeriodSeconds=0", "", "", []string{"kind", "metadata.name"}},
	}
	t.Logf("%d requests sent to each server", compareSteps(t, servers, ns, plain(steps)))
}

// TestWatchtestCustomResourceGeneration checks watchtest's generation rule
// for custom resources against a real CRD: every change but metadata and,
// with the status subresource, status counts, not only spec.
func TestWatchtestCustomResourceGeneration(t *testing.T) {
	cfg := config(t)
	rt, err := cfg.RoundTripper()
	require.NoError(t, err)
	c := client(t)
	ctx := context.Background()
	crds := c.Resource(httpwatch.Resource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	group := fmt.Sprintf("gen%d.example.com", time.Now().UnixNano()%100000)
	_, err = crds.Create(ctx, fmt.Appendf(nil, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"gizmos.%s"},
"spec":{"group":%q,"scope":"Namespaced","names":{"plural":"gizmos","singular":"gizmo","kind":"Gizmo"},
"versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`, group, group))
	require.NoError(t, err)
	t.Cleanup(func() { _ = crds.Delete(context.Background(), "gizmos."+group) })
	ns := namespace(t, c)
	fake := watchtest.NewServer()
	defer fake.Close()
	fake.AddResource(httpwatch.Resource{Group: group, Version: "v1", Resource: "gizmos"}, watchtest.Definition{Kind: "Gizmo", Namespaced: true, Status: true})
	servers := []rawServer{{"real", cfg.Host, &http.Client{Transport: rt}, map[string]string{}}, {"watchtest", fake.URL, fake.Client(), map[string]string{}}}
	gizmos := "/apis/" + group + "/v1/namespaces/NS/gizmos"
	require.Eventually(t, func() bool {
		code, _ := servers[0].do(t, writeStep{method: "GET", path: gizmos}, ns)
		return code == http.StatusOK
	}, wait, 100*time.Millisecond, "the CRD is served")
	gen := []string{"metadata.generation"}
	steps := []writeStep{
		{"create", "POST", gizmos, "application/json", `{"apiVersion":"` + group + `/v1","kind":"Gizmo","metadata":{"name":"g"},"spec":{"a":1},"data":{"x":1}}`, gen},
		{"a field beside spec", "PATCH", gizmos + "/g", mergeCT, `{"data":{"x":2}}`, gen},
		{"labels", "PATCH", gizmos + "/g", mergeCT, `{"metadata":{"labels":{"l":"1"}}}`, gen},
		{"a new top-level field", "PATCH", gizmos + "/g", mergeCT, `{"other":"y"}`, gen},
		{"status", "PATCH", gizmos + "/g/status", mergeCT, `{"status":{"ready":true}}`, gen},
		// Decision 7, writes as the real server answers them: replacing a subtree another manager owns fields in
		// conflicts on them; a delete a finalizer holds bumps the generation.
		{"apply a subtree", "PATCH", gizmos + "/s?fieldManager=m1", applyCT, `{"apiVersion":"` + group + `/v1","kind":"Gizmo","metadata":{"name":"s"},"spec":{"a":{"b":"1","c":"2"}}}`, gen},
		{"apply over the subtree", "PATCH", gizmos + "/s?fieldManager=m2", applyCT, `{"apiVersion":"` + group + `/v1","kind":"Gizmo","metadata":{"name":"s"},"spec":{"a":"flat"}}`, []string{"status", "reason", "message"}},
		{"a finalizer", "PATCH", gizmos + "/s", mergeCT, `{"metadata":{"finalizers":["x.io/f"]}}`, gen},
		{"delete held by it", "DELETE", gizmos + "/s", "", "", gen},
		{"finalizer removed", "PATCH", gizmos + "/s", mergeCT, `{"metadata":{"finalizers":null}}`, []string{"kind", "status"}},
	}
	t.Logf("%d requests sent to each server", compareSteps(t, servers, ns, plain(steps)))
}

// compareSteps sends each step to both servers and compares the answers:
// the status codes, then the step's paths. It returns how many requests
// each server got.
func compareSteps(t *testing.T, servers []rawServer, ns string, steps []diffStep) int {
	t.Helper()
	for _, st := range steps {
		if st.before != nil {
			st.before()
		}
		var codes [2]int
		var answers [2]gjson.Result
		for i, s := range servers {
			codes[i], answers[i] = s.send(t, st, ns)
		}
		if !assert.Equal(t, codes[0], codes[1], "%s: status code (real %s, watchtest %s)", st.name, answers[0].Raw, answers[1].Raw) {
			continue
		}
		for _, p := range st.same {
			assert.Equal(t, answers[0].Get(p).Value(), answers[1].Get(p).Value(), "%s: %s (real %s, watchtest %s)", st.name, p, answers[0].Raw, answers[1].Raw)
		}
	}
	return len(steps)
}
