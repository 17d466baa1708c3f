package watchtest_test

import (
	"errors"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/watchtest"
)

// widgets are a custom resource, served as widget defines them.
var (
	widgets = httpwatch.Resource{Group: "example.com", Version: "v1", Resource: "widgets"}
	widget  = watchtest.Definition{Kind: "Widget", Namespaced: true}
)

func TestCreateSetsServerFields(t *testing.T) {
	s := newServer(t)
	before, _ := strconv.Atoi(s.ResourceVersion())
	o := mustCreate(t, s, watchtest.Pods, map[string]any{"metadata": map[string]any{"name": "web-1"}, "spec": map[string]any{}})
	assert.Equal(t, "Pod", o.Get("kind").String())
	assert.Equal(t, "v1", o.Get("apiVersion").String())
	assert.Equal(t, "default", o.Get("metadata.namespace").String(), "a namespaced object without namespace goes to default")
	assert.NotEmpty(t, o.Get("metadata.uid").String())
	assert.NotEmpty(t, o.Get("metadata.creationTimestamp").String())
	assert.Equal(t, int64(1), o.Get("metadata.generation").Int())
	assert.Equal(t, strconv.Itoa(before+1), rvOf(o))
	assert.Equal(t, rvOf(o), s.ResourceVersion())

	ns := mustCreate(t, s, watchtest.Namespaces, `{"metadata":{"name":"prod","namespace":"ignored"}}`)
	assert.False(t, ns.Get("metadata.namespace").Exists(), "cluster-scoped objects have no namespace")

	gen := mustCreate(t, s, watchtest.ConfigMaps, []byte(`{"metadata":{"generateName":"cfg-","namespace":"prod"}}`))
	assert.Regexp(t, `^cfg-[a-z0-9]{5}$`, gen.Get("metadata.name").String())
}

func TestCreateErrors(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Pods, podJSON("prod", "web-1", nil))
	tests := []struct {
		name string
		obj  any
		want error
	}{
		{"duplicate", podJSON("prod", "web-1", nil), watchtest.ErrAlreadyExists},
		{"not an object", `[1,2]`, watchtest.ErrInvalid},
		{"not JSON", []byte(`{`), watchtest.ErrInvalid},
		{"no name", `{"metadata":{}}`, watchtest.ErrInvalid},
		{"slash in name", `{"metadata":{"name":"a/b"}}`, watchtest.ErrInvalid},
		{"wrong kind", `{"kind":"Service","metadata":{"name":"x"}}`, watchtest.ErrInvalid},
		{"wrong apiVersion", `{"apiVersion":"apps/v1","metadata":{"name":"x"}}`, watchtest.ErrInvalid},
		{"bad labels", `{"metadata":{"name":"x","labels":{"a":1}}}`, watchtest.ErrInvalid},
		{"unencodable", map[string]any{"c": make(chan int)}, watchtest.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Create(watchtest.Pods, tt.obj)
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), "watchtest: create pods")
		})
	}
}

func TestUpdate(t *testing.T) {
	s := newServer(t)
	o := mustCreate(t, s, watchtest.Pods, podJSON("prod", "web-1", map[string]string{"app": "web"}))

	// An update that changes nothing keeps the resourceVersion.
	same, err := s.Update(watchtest.Pods, o.Raw)
	require.NoError(t, err)
	assert.Equal(t, rvOf(o), rvOf(gjson.ParseBytes(same.Raw())))

	// A label change is a new version, without a new generation.
	up, err := s.Update(watchtest.Pods, podJSON("prod", "web-1", map[string]string{"app": "db"}))
	require.NoError(t, err)
	upd := gjson.ParseBytes(up.Raw())
	assert.NotEqual(t, rvOf(o), rvOf(upd))
	assert.Equal(t, o.Get("metadata.uid").String(), upd.Get("metadata.uid").String(), "the server keeps the uid")
	assert.Equal(t, int64(1), upd.Get("metadata.generation").Int())

	// A spec change bumps metadata.generation.
	spec, err := s.Update(watchtest.Pods, `{"metadata":{"name":"web-1","namespace":"prod"},"spec":{"nodeName":"n1"}}`)
	require.NoError(t, err)
	assert.Equal(t, int64(2), gjson.GetBytes(spec.Raw(), "metadata.generation").Int())

	// A stale resourceVersion conflicts.
	_, err = s.Update(watchtest.Pods, o.Raw)
	assert.ErrorIs(t, err, watchtest.ErrConflict)

	_, err = s.Update(watchtest.Pods, podJSON("prod", "missing", nil))
	assert.ErrorIs(t, err, watchtest.ErrNotFound)
}

func TestDeleteAndFinalizers(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"plain","namespace":"ns"}}`)
	kept := mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"kept","namespace":"ns","finalizers":["example.com/wait"]}}`)
	w := openWatch(t, s, "/api/v1/namespaces/ns/configmaps?watch=1&resourceVersion="+rvOf(kept))

	last, err := s.Delete(watchtest.ConfigMaps, "ns", "plain")
	require.NoError(t, err)
	e := w.next()
	assert.Equal(t, "DELETED plain "+rvOf(gjson.ParseBytes(last.Raw())), e.String())

	_, err = s.Delete(watchtest.ConfigMaps, "ns", "kept")
	require.NoError(t, err)
	e = w.next()
	assert.Equal(t, "MODIFIED", e.Type, "an object with finalizers is only marked")
	assert.NotEmpty(t, e.get("metadata.deletionTimestamp"))

	_, err = s.Delete(watchtest.ConfigMaps, "ns", "kept")
	require.NoError(t, err, "deleting an object being deleted is a no-op")

	marked := e
	done, err := s.Update(watchtest.ConfigMaps, `{"metadata":{"name":"kept","namespace":"ns","finalizers":[]}}`)
	require.NoError(t, err)
	e = w.next()
	assert.Equal(t, "DELETED kept "+s.ResourceVersion(), e.String(), "removing the last finalizer deletes")
	// As on the real server: the writer gets what it wrote at the version
	// it had; the watch gets the last stored state.
	assert.Equal(t, marked.get("metadata.resourceVersion"), rvOf(gjson.ParseBytes(done.Raw())))
	assert.Equal(t, `[]`, gjson.GetBytes(done.Raw(), "metadata.finalizers").Raw)
	assert.Equal(t, `["example.com/wait"]`, gjson.GetBytes(e.Object, "metadata.finalizers").Raw)

	_, err = s.Get(watchtest.ConfigMaps, "ns", "kept")
	assert.ErrorIs(t, err, watchtest.ErrNotFound)
	_, err = s.Delete(watchtest.ConfigMaps, "ns", "kept")
	assert.ErrorIs(t, err, watchtest.ErrNotFound)
}

func TestCRUDOverHTTP(t *testing.T) {
	s := newServer(t)
	s.AddResource(widgets, widget)
	base := "/apis/example.com/v1/namespaces/prod/widgets"

	code, body, _ := do(t, s, http.MethodPost, base, `{"metadata":{"name":"w1"},"spec":{"size":1}}`)
	require.Equal(t, http.StatusCreated, code, "%s", body)
	created := gjson.ParseBytes(body)
	assert.Equal(t, "example.com/v1", created.Get("apiVersion").String())
	assert.Equal(t, "Widget", created.Get("kind").String())
	assert.Equal(t, "prod", created.Get("metadata.namespace").String(), "the path sets the namespace")

	code, body = get(t, s, base+"/w1")
	require.Equal(t, http.StatusOK, code)
	assert.JSONEq(t, created.Raw, string(body))

	code, body, _ = do(t, s, http.MethodPost, base, `{"metadata":{"name":"w1"}}`)
	assert.Equal(t, http.StatusConflict, code)
	assert.Equal(t, "AlreadyExists", gjson.GetBytes(body, "reason").String())
	assert.Equal(t, `widgets.example.com "w1" already exists`, gjson.GetBytes(body, "message").String())

	code, body, _ = do(t, s, http.MethodPost, base, `{"metadata":{"name":"w2","namespace":"other"}}`)
	assert.Equal(t, http.StatusBadRequest, code, "%s", body)

	stale := created.Raw
	code, body, _ = do(t, s, http.MethodPut, base+"/w1", `{"metadata":{"name":"w1","resourceVersion":"`+rvOf(created)+`"},"spec":{"size":2}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.Equal(t, int64(2), gjson.GetBytes(body, "spec.size").Int())

	code, body, _ = do(t, s, http.MethodPut, base+"/w1", stale)
	assert.Equal(t, http.StatusConflict, code)
	assert.Equal(t, "Conflict", gjson.GetBytes(body, "reason").String())
	assert.Equal(t, []string{"kind", "apiVersion", "metadata", "status", "message", "reason", "details", "code"}, keysOf(t, body))

	code, _, _ = do(t, s, http.MethodPut, base+"/w1", `{"metadata":{"name":"other"}}`)
	assert.Equal(t, http.StatusBadRequest, code)

	code, body, _ = do(t, s, http.MethodDelete, base+"/w1", "")
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.Equal(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"w1","group":"example.com","kind":"widgets","uid":"`+created.Get("metadata.uid").String()+`"}}`+"\n", string(body),
		"a custom resource deleted at once answers with a Success Status")
	code, body = get(t, s, base+"/w1")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"widgets.example.com \"w1\" not found","reason":"NotFound","details":{"name":"w1","group":"example.com","kind":"widgets"},"code":404}`+"\n", string(body))

	code, _, _ = do(t, s, http.MethodPatch, base+"/w1", `{}`)
	assert.Equal(t, http.StatusUnsupportedMediaType, code, "a patch without a patch media type")
	code, _, _ = do(t, s, http.MethodPost, "/api/v1/pods", podJSON("a", "b", nil))
	assert.Equal(t, http.StatusMethodNotAllowed, code, "a namespaced object is created in a namespace")
}

// The Status bodies match the real server's byte for byte.
func TestStatusMatchesFixtures(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		fixture string
		path    string
		code    int
	}{
		{"get-missing.json", "/api/v1/namespaces/fixtures/pods/does-not-exist", http.StatusNotFound},
		{"list-unknown-resource.json", "/api/v1/namespaces/fixtures/gizmos", http.StatusNotFound},
		{"list-bad-selector.json", "/api/v1/namespaces/fixtures/pods?labelSelector===", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			code, body := get(t, s, tt.path)
			assert.Equal(t, tt.code, code)
			assert.Equal(t, string(fixture(t, tt.fixture)), string(body))
		})
	}
}

func TestGoErrorsWrap(t *testing.T) {
	s := newServer(t)
	_, err := s.Get(watchtest.Pods, "ns", "nope")
	assert.True(t, errors.Is(err, watchtest.ErrNotFound))
	assert.EqualError(t, err, `watchtest: get pods ns/nope: pods "nope" not found`)
	_, err = s.Delete(watchtest.Namespaces, "ignored", "nope")
	assert.EqualError(t, err, `watchtest: delete namespaces nope: namespaces "nope" not found`)
	assert.Error(t, s.Compact("abc"))
}

func TestList(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Pods, podJSON("b", "x", nil))
	mustCreate(t, s, watchtest.Pods, podJSON("a", "y", nil))
	mustCreate(t, s, watchtest.Pods, podJSON("a", "x", nil))
	var got []string
	for _, o := range s.List(watchtest.Pods, "") {
		got = append(got, o.Namespace()+"/"+o.Name())
	}
	assert.Equal(t, []string{"a/x", "a/y", "b/x"}, got)
	assert.Len(t, s.List(watchtest.Pods, "a"), 2)
}

func TestUnstartedServer(t *testing.T) {
	s := watchtest.NewUnstartedServer()
	mustCreate(t, s, watchtest.Pods, podJSON("ns", "early", nil))
	s.Start()
	defer s.Close()
	assert.Equal(t, []string{"early"}, names(list(t, s, "/api/v1/namespaces/ns/pods").Get("items").Array()))

	never := watchtest.NewUnstartedServer()
	never.Close() // closing a server that never started is fine
}

func TestStartTLS(t *testing.T) {
	s := watchtest.NewUnstartedServer()
	s.StartTLS()
	defer s.Close()
	mustCreate(t, s, watchtest.Pods, podJSON("ns", "a", nil))
	w := openWatch(t, s, "/api/v1/namespaces/ns/pods?watch=1")
	assert.Equal(t, "ADDED", w.next().Type)
	assert.Contains(t, s.URL, "https://")
}

// The Go methods serve the resources the server has and the built-in ones
// watchtest knows; any other fails loudly, naming what to do.
func TestUnservedResource(t *testing.T) {
	s := newServer(t)
	gadgets := httpwatch.Resource{Group: "example.com", Version: "v1", Resource: "gadgets"}
	_, err := s.Create(gadgets, `{"metadata":{"name":"g","namespace":"ns"}}`)
	require.ErrorIs(t, err, discovery.ErrUnknownResource)
	assert.ErrorContains(t, err, "gadgets.v1.example.com")
	assert.ErrorContains(t, err, "AddResource")
	_, err = s.Get(gadgets, "ns", "g")
	assert.ErrorIs(t, err, discovery.ErrUnknownResource)
	assert.Panics(t, func() { s.List(gadgets, "") })
	assert.Panics(t, func() { s.AddResource(gadgets, watchtest.Definition{}) }, "a custom resource needs its Kind")

	// A built-in one is added on first use, as the real server has it.
	_, err = s.Create(watchtest.Leases, `{"metadata":{"name":"l","namespace":"ns"}}`)
	require.NoError(t, err)
	code, body := get(t, s, "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l")
	assert.Equal(t, http.StatusOK, code, "%s", body)

	// The address's namespace is used as a client's is: written to, read
	// when no namespace is given, and an object naming another is refused.
	prod := watchtest.ConfigMaps
	prod.Namespace = "prod"
	_, err = s.Create(prod, `{"metadata":{"name":"c","namespace":"ns"}}`)
	require.ErrorContains(t, err, "the namespace of the provided object does not match the namespace sent on the request")
	c, err := s.Create(prod, `{"metadata":{"name":"c"}}`)
	require.NoError(t, err)
	assert.Equal(t, "prod", c.Namespace())
	_, err = s.Create(watchtest.ConfigMaps, `{"metadata":{"name":"c","namespace":"ns"}}`)
	require.NoError(t, err)
	assert.Len(t, s.List(prod, ""), 1, "prod's only")
	assert.Len(t, s.List(watchtest.ConfigMaps, ""), 2, "every namespace")
	got, err := s.Get(prod, "", "c")
	require.NoError(t, err)
	assert.Equal(t, "prod", got.Namespace())
	_, err = s.Delete(prod, "", "c")
	require.NoError(t, err)
	assert.Empty(t, s.List(prod, ""))
}

// An update naming another incarnation of the object (its uid) is the
// real server's 409, storage error and all.
func TestUpdateWithAnotherUID(t *testing.T) {
	s := newServer(t)
	o := mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"u1","namespace":"prod"}}`)
	code, body, _ := do(t, s, http.MethodPut, "/api/v1/namespaces/prod/configmaps/u1", `{"metadata":{"name":"u1","uid":"wrong"}}`)
	assert.Equal(t, http.StatusConflict, code)
	assert.Equal(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on configmaps \"u1\": StorageError: invalid object, Code: 4, Key: /registry/configmaps/prod/u1, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: wrong, UID in object meta: `+o.Get("metadata.uid").String()+`","reason":"Conflict","details":{"name":"u1","kind":"configmaps"},"code":409}`+"\n", string(body))
	_, err := s.Update(watchtest.ConfigMaps, `{"metadata":{"name":"u1","namespace":"prod","uid":"wrong"}}`)
	assert.ErrorIs(t, err, watchtest.ErrConflict)
}

// Only some built-in resources count generations, as on the real server
// (checked against it by e2e TestWatchtestWritesMatchRealServer); custom
// resources always do.
func TestGenerationByResource(t *testing.T) {
	s := watchtest.NewServer()
	defer s.Close()
	s.AddResource(widgets, widget)
	for _, tc := range []struct {
		r    httpwatch.Resource
		want string
	}{
		{watchtest.ConfigMaps, ""},
		{watchtest.Pods, "1"},
		{watchtest.Deployments, "1"},
		{widgets, "1"},
	} {
		body, err := s.Create(tc.r, `{"metadata":{"name":"x","namespace":"ns"}}`)
		require.NoError(t, err)
		assert.Equal(t, tc.want, gjson.GetBytes(body.Raw(), "metadata.generation").Raw, tc.r.String())
	}
}
