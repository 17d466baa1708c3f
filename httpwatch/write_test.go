package httpwatch

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/testkit/apitest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sent is what a fake server saw of one request.
type sent struct {
	method, path, query, contentType, body string
}

// recordWrites serves every request with answer (discovery with 404, so
// scope checks are skipped) and returns a client for it and what it saw.
func recordWrites(t *testing.T, answer string) (*Client, func() []sent) {
	t.Helper()
	var mu sync.Mutex
	var seen []sent
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api" || r.URL.Path == "/apis" {
			http.NotFound(w, r)
			return
		}
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, sent{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), string(b)})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	})
	return newTestClient(t, srv.URL), func() []sent {
		mu.Lock()
		defer mu.Unlock()
		return append([]sent(nil), seen...)
	}
}

const (
	cmJSON    = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns1","resourceVersion":"3"}}`
	scaleJSON = `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web","namespace":"ns1"},"spec":{"replicas":3}}`
)

var (
	zeroSeconds = int64(0)
	cmsNS1      = Resource{Version: "v1", Resource: "configmaps", Namespace: "ns1"}
	depsNS1     = Resource{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "ns1"}
)

const cmItem = "/api/v1/namespaces/ns1/configmaps/a"

// writeRequests are the exact requests of every write, with and without
// options, in the form the real kube-apiserver accepts (the e2e tests send
// each kind to one).
var writeRequests = []struct {
	name  string
	res   Resource
	write func(context.Context, *ResourceClient) error
	want  sent
}{
	{"create", cmsNS1, func(ctx context.Context, rc *ResourceClient) error {
		_, err := rc.Create(ctx, []byte(cmJSON))
		return err
	}, sent{"POST", "/api/v1/namespaces/ns1/configmaps", "", "application/json", cmJSON}},
	{"create with options", cmsNS1, func(ctx context.Context, rc *ResourceClient) error {
		_, err := rc.Create(ctx, []byte(cmJSON), WriteOptions{DryRun: true, FieldManager: "labeller", FieldValidation: FieldValidationStrict})
		return err
	}, sent{"POST", "/api/v1/namespaces/ns1/configmaps", "dryRun=All&fieldManager=labeller&fieldValidation=Strict", "application/json", cmJSON}},
	{"update with options", cmsNS1, func(ctx context.Context, rc *ResourceClient) error {
		_, err := rc.Update(ctx, []byte(cmJSON), WriteOptions{FieldValidation: FieldValidationIgnore})
		return err
	}, sent{"PUT", cmItem, "fieldValidation=Ignore", "application/json", cmJSON}},
	{"merge patch", cmsNS1, func(ctx context.Context, rc *ResourceClient) error {
		_, err := rc.Patch(ctx, "a", MergePatch, []byte(`{"metadata":{"labels":{"x":"1"}}}`))
		return err
	}, sent{"PATCH", cmItem, "", "application/merge-patch+json", `{"metadata":{"labels":{"x":"1"}}}`}},
	{"json patch dry run", cmsNS1, func(ctx context.Context, rc *ResourceClient) error {
		_, err := rc.Patch(ctx, "a", JSONPatch, []byte(`[{"op":"remove","path":"/data/x"}]`), WriteOptions{DryRun: true})
		return err
	}, sent{"PATCH", cmItem, "dryRun=All", "application/json-patch+json", `[{"op":"remove","path":"/data/x"}]`}},
	{"strategic merge patch", depsNS1, func(ctx context.Context, rc *ResourceClient) error {
		_, err := rc.Patch(ctx, "web", StrategicMergePatch, []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"x"}]}}}}`), WriteOptions{FieldManager: "m"})
		return err
	}, sent{"PATCH", "/apis/apps/v1/namespaces/ns1/deployments/web", "fieldManager=m", "application/strategic-merge-patch+json", `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"x"}]}}}}`}},
	{"apply", cmsNS1, func(ctx context.Context, rc *ResourceClient) error {
		_, err := rc.Apply(ctx, []byte(cmJSON), WriteOptions{FieldManager: "labeller"})
		return err
	}, sent{"PATCH", cmItem, "fieldManager=labeller", "application/apply-patch+yaml", cmJSON}},
	{"apply forced dry run", cmsNS1, func(ctx context.Context, rc *ResourceClient) error {
		_, err := rc.Apply(ctx, []byte(cmJSON), WriteOptions{FieldManager: "labeller", Force: true, DryRun: true, FieldValidation: FieldValidationWarn})
		return err
	}, sent{"PATCH", cmItem, "dryRun=All&fieldManager=labeller&fieldValidation=Warn&force=true", "application/apply-patch+yaml", cmJSON}},
	{"delete", cmsNS1, func(ctx context.Context, rc *ResourceClient) error {
		return rc.Delete(ctx, "a")
	}, sent{"DELETE", cmItem, "", "", ""}},
	{"delete with options", cmsNS1, func(ctx context.Context, rc *ResourceClient) error {
		return rc.Delete(ctx, "a", DeleteOptions{DryRun: true, GracePeriodSeconds: &zeroSeconds, PropagationPolicy: PropagationForeground, Preconditions: Preconditions{UID: "u1", ResourceVersion: "3"}})
	}, sent{"DELETE", cmItem, "", "application/json", `{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"],"gracePeriodSeconds":0,"propagationPolicy":"Foreground","preconditions":{"uid":"u1","resourceVersion":"3"}}`}},
	{"delete orphan", cmsNS1, func(ctx context.Context, rc *ResourceClient) error {
		return rc.Delete(ctx, "a", DeleteOptions{PropagationPolicy: PropagationOrphan})
	}, sent{"DELETE", cmItem, "", "application/json", `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Orphan"}`}},
	{"delete collection", cmsNS1, func(ctx context.Context, rc *ResourceClient) error {
		return rc.DeleteCollection(ctx, ListOptions{LabelSelector: "app=web", FieldSelector: "metadata.name!=keep"}, DeleteOptions{PropagationPolicy: PropagationBackground})
	}, sent{"DELETE", "/api/v1/namespaces/ns1/configmaps", "fieldSelector=metadata.name%21%3Dkeep&labelSelector=app%3Dweb", "application/json", `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}`}},
	{"get status", depsNS1, func(ctx context.Context, rc *ResourceClient) error {
		_, err := rc.Subresource("status").Get(ctx, "web")
		return err
	}, sent{"GET", "/apis/apps/v1/namespaces/ns1/deployments/web/status", "", "", ""}},
	{"update status", cmsNS1, func(ctx context.Context, rc *ResourceClient) error {
		_, err := rc.Subresource("status").Update(ctx, []byte(cmJSON), WriteOptions{FieldManager: "ctl"})
		return err
	}, sent{"PUT", cmItem + "/status", "fieldManager=ctl", "application/json", cmJSON}},
	{"patch status", depsNS1, func(ctx context.Context, rc *ResourceClient) error {
		_, err := rc.Subresource("status").Patch(ctx, "web", MergePatch, []byte(`{"status":{"replicas":2}}`))
		return err
	}, sent{"PATCH", "/apis/apps/v1/namespaces/ns1/deployments/web/status", "", "application/merge-patch+json", `{"status":{"replicas":2}}`}},
	{"apply status", cmsNS1, func(ctx context.Context, rc *ResourceClient) error {
		_, err := rc.Subresource("status").Apply(ctx, []byte(cmJSON), WriteOptions{FieldManager: "ctl", Force: true})
		return err
	}, sent{"PATCH", cmItem + "/status", "fieldManager=ctl&force=true", "application/apply-patch+yaml", cmJSON}},
	{"update scale", depsNS1, func(ctx context.Context, rc *ResourceClient) error {
		_, err := rc.Subresource("scale").Update(ctx, []byte(scaleJSON))
		return err
	}, sent{"PUT", "/apis/apps/v1/namespaces/ns1/deployments/web/scale", "", "application/json", scaleJSON}},
	{"namespace", cmsNS1, func(ctx context.Context, rc *ResourceClient) error {
		_, err := rc.Namespace("other").Patch(ctx, "a", MergePatch, []byte(`{}`))
		return err
	}, sent{"PATCH", "/api/v1/namespaces/other/configmaps/a", "", "application/merge-patch+json", `{}`}},
}

func TestWriteRequests(t *testing.T) {
	for _, tc := range writeRequests {
		t.Run(tc.name, func(t *testing.T) {
			c, seen := recordWrites(t, cmJSON)
			require.NoError(t, tc.write(context.Background(), c.Resource(tc.res)))
			require.Equal(t, []sent{tc.want}, seen())
		})
	}
}

// Mistakes the client catches before sending anything (decision 19).
func TestWriteRefusals(t *testing.T) {
	c, seen := recordWrites(t, cmJSON)
	rc := c.Resource(Resource{Version: "v1", Resource: "configmaps", Namespace: "ns1"})
	ctx := context.Background()
	_, err := rc.Apply(ctx, []byte(cmJSON), WriteOptions{})
	assert.ErrorIs(t, err, errFieldManagerRequired)
	_, err = rc.Apply(ctx, []byte(cmJSON))
	assert.ErrorIs(t, err, errFieldManagerRequired, "options are optional to the compiler, not to an apply")
	_, err = rc.Patch(ctx, "a", "", []byte(`{}`))
	assert.ErrorContains(t, err, "patch type")
	_, err = rc.Patch(ctx, "a", "application/apply-patch+yaml", []byte(`{}`))
	assert.ErrorContains(t, err, "Apply for an apply")
	for _, pt := range []PatchType{"application/json", "merge", "application/merge-patch+json; charset=utf-8"} {
		_, err = rc.Patch(ctx, "a", pt, []byte(`{}`))
		assert.ErrorContains(t, err, "want MergePatch, JSONPatch or StrategicMergePatch", "%q", pt)
		_, err = rc.Subresource("status").Patch(ctx, "a", pt, []byte(`{}`))
		assert.ErrorContains(t, err, "want MergePatch, JSONPatch or StrategicMergePatch", "%q", pt)
	}
	_, err = rc.Update(ctx, []byte(cmJSON), WriteOptions{}, WriteOptions{DryRun: true})
	assert.ErrorContains(t, err, "want at most one")
	assert.ErrorContains(t, rc.Delete(ctx, "a", DeleteOptions{}, DeleteOptions{}), "want at most one")
	assert.ErrorContains(t, rc.DeleteCollection(ctx, ListOptions{}, DeleteOptions{}, DeleteOptions{}), "want at most one")
	_, err = rc.Apply(ctx, []byte(cmJSON), WriteOptions{FieldManager: "a"}, WriteOptions{FieldManager: "b"})
	assert.ErrorContains(t, err, "want at most one")
	_, err = rc.Subresource("a/b").Get(ctx, "a")
	assert.ErrorContains(t, err, "subresource")
	for name, write := range map[string]func() error{
		"create": func() error { _, err := rc.Create(ctx, []byte(cmJSON), WriteOptions{Force: true}); return err },
		"update": func() error { _, err := rc.Update(ctx, []byte(cmJSON), WriteOptions{Force: true}); return err },
		"patch": func() error {
			_, err := rc.Patch(ctx, "a", MergePatch, []byte(`{}`), WriteOptions{Force: true})
			return err
		},
	} {
		assert.ErrorContains(t, write(), "Force is for Apply only", name)
	}
	assert.Empty(t, seen())
}

// Answers of subresources skip the Transform, written for the resource's
// own kind; the object's own answers go through it (decision 19).
func TestSubresourceSkipsTransform(t *testing.T) {
	c, _ := recordWrites(t, scaleJSON)
	rc := c.Resource(Resource{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "ns1"})
	calls := 0
	rc.Transform = func(o *raw.Object) (*raw.Object, error) { calls++; return o, nil }
	o, err := rc.Subresource("scale").Get(context.Background(), "web")
	require.NoError(t, err)
	assert.Equal(t, int64(3), o.Get("spec.replicas").Int())
	assert.Zero(t, calls)
	_, err = rc.Patch(context.Background(), "web", MergePatch, []byte(`{}`))
	require.NoError(t, err)
	assert.Equal(t, 1, calls)
}

// Nor are they cut by the Projection, whose paths name the resource's own
// fields: a projected client still reads a whole Scale (decision 19).
func TestSubresourceSkipsProjection(t *testing.T) {
	c, _ := recordWrites(t, scaleJSON)
	rc := c.Resource(depsNS1)
	p, err := raw.NewProjection("status.readyReplicas")
	require.NoError(t, err)
	rc.Projection = p
	ctx := context.Background()
	o, err := rc.Subresource("scale").Get(ctx, "web")
	require.NoError(t, err)
	assert.Equal(t, int64(3), o.Get("spec.replicas").Int())
	o, err = rc.Subresource("scale").Patch(ctx, "web", MergePatch, []byte(`{"spec":{"replicas":3}}`))
	require.NoError(t, err)
	assert.Equal(t, int64(3), o.Get("spec.replicas").Int())
	o, err = rc.Patch(ctx, "web", MergePatch, []byte(`{}`))
	require.NoError(t, err)
	assert.False(t, o.Get("spec").Exists(), "the object's own answers are cut: %s", o.Raw())
}

func TestResourceString(t *testing.T) {
	for _, tc := range []struct {
		r    Resource
		want string
	}{
		{Resource{Version: "v1", Resource: "pods", Namespace: "default"}, "pods.v1"},
		{Resource{Group: "apps", Version: "v1", Resource: "deployments"}, "deployments.v1.apps"},
		{Resource{Group: "example.com", Version: "v1beta1", Resource: "widgets"}, "widgets.v1beta1.example.com"},
	} {
		assert.Equal(t, tc.want, tc.r.String())
	}
}

// Namespace derives a client; the original keeps its namespace and settings
// carry over.
func TestNamespace(t *testing.T) {
	c, _ := recordWrites(t, cmJSON)
	all := c.Resource(Resource{Version: "v1", Resource: "configmaps"})
	all.KeepManagedFields = true
	ns1 := all.Namespace("ns1")
	assert.Equal(t, "ns1", ns1.Resource().Namespace)
	assert.True(t, ns1.KeepManagedFields)
	assert.Equal(t, "", all.Resource().Namespace)
}

// The server's warnings (unknown fields under FieldValidationWarn,
// deprecated APIs) are logged with their text.
func TestWarningsLogged(t *testing.T) {
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Warning", `299 - "unknown field \"bogus\""`)
		w.Header().Add("Warning", `not the usual form`)
		io.WriteString(w, cmJSON)
	})
	c := newTestClient(t, srv.URL)
	var logged strings.Builder
	c.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	_, err := c.Resource(Resource{Version: "v1", Resource: "configmaps", Namespace: "ns1"}).Create(context.Background(), []byte(cmJSON))
	require.NoError(t, err)
	assert.Contains(t, logged.String(), `level=WARN msg="httpwatch: server warning" verb=POST path=/api/v1/namespaces/ns1/configmaps warning="unknown field \"bogus\""`)
	assert.NotContains(t, logged.String(), "not the usual form", "a malformed warning is dropped")
}

// A read's warning is logged once per path and text (an informer's lists
// and watches repeat it); a write's every time.
func TestReadWarningsLoggedOnce(t *testing.T) {
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Warning", `299 - "v1beta1 Widget is deprecated"`)
		io.WriteString(w, cmJSON)
	})
	c := newTestClient(t, srv.URL)
	var logged strings.Builder
	c.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	cms := c.Resource(Resource{Version: "v1", Resource: "configmaps", Namespace: "ns1"})
	for range 3 {
		_, err := cms.Get(context.Background(), "cfg")
		require.NoError(t, err)
		_, err = cms.Update(context.Background(), []byte(cmJSON))
		require.NoError(t, err)
	}
	assert.Equal(t, 1, strings.Count(logged.String(), "verb=GET"), logged.String())
	assert.Equal(t, 3, strings.Count(logged.String(), "verb=PUT"), logged.String())
}

func TestPatchRefusesAnEmptyPatch(t *testing.T) {
	c := newTestClient(t, "http://127.0.0.1:1")
	_, err := c.Resource(Resource{Version: "v1", Resource: "configmaps", Namespace: "ns1"}).Patch(context.Background(), "cfg", MergePatch, nil)
	require.ErrorContains(t, err, "empty patch")
}
