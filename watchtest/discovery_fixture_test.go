package watchtest_test

import (
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/watchtest"
)

const aggregatedAccept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// Discovery lists groups in kube-apiserver 1.37's order (golden
// fixtures), whatever order they were registered in; groups it does not
// know, as custom resources' are, follow by name. Each group appears
// once, and the core group once with its one version (decision 7).
func TestDiscoveryGroupOrderMatchesRealServer(t *testing.T) {
	var builtInOrder []string
	for _, g := range gjson.GetBytes(fixture(t, "discovery-apis.json"), "groups.#.name").Array() {
		builtInOrder = append(builtInOrder, g.String())
	}
	require.NotEmpty(t, builtInOrder)
	s := newServer(t)
	thing := watchtest.Definition{Kind: "Thing", Namespaced: true}
	for _, g := range []string{"zz.example.com", "aa.example.com"} {
		s.AddResource(httpwatch.Resource{Group: g, Version: "v1", Resource: "things"}, thing)
	}
	for _, g := range slices.Backward(builtInOrder) {
		s.AddResource(httpwatch.Resource{Group: g, Version: "v1", Resource: "things"}, thing)
	}
	want := append(slices.Clone(builtInOrder), "aa.example.com", "zz.example.com")

	code, body, _ := doAccept(t, s, "/apis", "")
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.Equal(t, want, strs(gjson.GetBytes(body, "groups.#.name")), "APIGroupList")
	code, body, _ = doAccept(t, s, "/apis", aggregatedAccept)
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.Equal(t, want, strs(gjson.GetBytes(body, "items.#.metadata.name")), "aggregated")

	code, body, _ = doAccept(t, s, "/api", "")
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.Equal(t, gjson.GetBytes(fixture(t, "discovery-api.json"), "versions").Value(), gjson.GetBytes(body, "versions").Value(), "APIVersions")
	code, body, _ = doAccept(t, s, "/api", aggregatedAccept)
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.Equal(t, []string{"v1"}, strs(gjson.GetBytes(body, "items.#.versions.#.version|@flatten")), "aggregated core")
}

// An entry of a resource list carries the fields kube-apiserver 1.37
// gives it and no others (no null shortNames where a resource has none),
// and the list names its group version as the real server does: "v1"
// with no apiVersion for the core group, "GROUP/VERSION" with one for the
// others (golden fixtures; decision 7).
func TestDiscoveryResourceListsMatchRealServer(t *testing.T) {
	s := newServer(t)
	for _, r := range []httpwatch.Resource{watchtest.Secrets, watchtest.ReplicaSets, watchtest.StatefulSets} {
		s.AddResource(r, watchtest.Definition{})
	}
	for _, tc := range []struct{ path, fixture string }{
		{"/api/v1", "discovery-api-v1.json"},
		{"/apis/apps/v1", "discovery-apis-apps-v1.json"},
	} {
		want := gjson.ParseBytes(fixture(t, tc.fixture))
		code, body, _ := doAccept(t, s, tc.path, "")
		require.Equal(t, http.StatusOK, code, "%s", body)
		got := gjson.ParseBytes(body)
		for _, f := range []string{"kind", "apiVersion", "groupVersion"} {
			assert.Equal(t, want.Get(f).Value(), got.Get(f).Value(), "%s %s", tc.path, f)
		}
		entries := got.Get("resources").Array()
		require.NotEmpty(t, entries, tc.path)
		for _, e := range entries {
			name := e.Get("name").String()
			w := want.Get(`resources.#(name==` + strconv.Quote(name) + `)`)
			require.True(t, w.Exists(), "%s: %s is no resource of the real server", tc.path, name)
			assert.Equal(t, withoutHash(w.Value()), withoutHash(e.Value()), "%s %s", tc.path, name)
		}
	}

	for _, tc := range []struct{ path, fixture, versions string }{
		{"/api", "discovery-api-aggregated.json", "items.0.versions"},
		{"/apis", "discovery-apis-aggregated.json", `items.#(metadata.name=="apps").versions`},
	} {
		want := gjson.GetBytes(fixture(t, tc.fixture), tc.versions+`.#(version=="v1").resources`)
		code, body, _ := doAccept(t, s, tc.path, aggregatedAccept)
		require.Equal(t, http.StatusOK, code, "%s", body)
		entries := gjson.GetBytes(body, tc.versions+`.#(version=="v1").resources`).Array()
		require.NotEmpty(t, entries, tc.path)
		for _, e := range entries {
			name := e.Get("resource").String()
			w := want.Get(`#(resource==` + strconv.Quote(name) + `)`)
			require.True(t, w.Exists(), "%s: %s is no resource of the real server", tc.path, name)
			assert.Equal(t, withoutHash(w.Value()), withoutHash(e.Value()), "%s %s", tc.path, name)
		}
	}
}

func strs(r gjson.Result) []string {
	var out []string
	for _, v := range r.Array() {
		out = append(out, v.String())
	}
	return out
}
