package watchtest_test

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/watchtest"
)

var storageVersionHash = regexp.MustCompile(`,"storageVersionHash":"[^"]*"`)

// Decision 40: discovery lists every built-in resource of kube-apiserver
// 1.37.2, registered or not, exactly as the real server's documents do
// (golden fixtures; storageVersionHash, which watchtest has no storage
// for, aside), so kubectl api-resources prints the same.
func TestBuiltInDiscoveryMatchesRealServer(t *testing.T) {
	s := newServer(t)
	for _, tc := range []struct{ path, accept, fixture string }{
		{"/api", aggregatedAccept, "discovery-api-aggregated.json"},
		{"/apis", aggregatedAccept, "discovery-apis-aggregated.json"},
		{"/apis", "", "discovery-apis.json"},
		{"/api/v1", "", "discovery-api-v1.json"},
		{"/apis/apps/v1", "", "discovery-apis-apps-v1.json"},
	} {
		code, body, _ := doAccept(t, s, tc.path, tc.accept)
		require.Equal(t, http.StatusOK, code, tc.path)
		want := storageVersionHash.ReplaceAllString(compact(t, fixture(t, tc.fixture)), "")
		require.JSONEq(t, want, string(body), "%s %s", tc.path, tc.accept)
	}
}

// Decision 40: a built-in resource no test registered is served, empty,
// and takes writes; a resource the real server does not have is not, nor
// one withheld.
func TestUnregisteredBuiltInIsEmpty(t *testing.T) {
	s := newServer(t)
	code, body := get(t, s, "/apis/batch/v1/namespaces/ns/jobs")
	require.Equal(t, http.StatusOK, code, string(body))
	require.Equal(t, "JobList", gjson.GetBytes(body, "kind").String())
	require.Equal(t, "[]", gjson.GetBytes(body, "items").Raw)

	code, body, _ = sendH(t, s, http.MethodPost, "/api/v1/namespaces/ns/services", `{"metadata":{"name":"svc"}}`, nil)
	require.Equal(t, http.StatusCreated, code, string(body))
	_, err := s.Get(httpwatch.Resource{Version: "v1", Resource: "services"}, "ns", "svc")
	require.NoError(t, err)

	code, _ = get(t, s, "/apis/batch/v1/namespaces/ns/jobz")
	require.Equal(t, http.StatusNotFound, code)
	code, _ = get(t, s, "/apis/batch/v2/namespaces/ns/jobs")
	require.Equal(t, http.StatusNotFound, code)

	// A withheld one is gone, as on a server without it.
	s.Withhold(watchtest.Leases)
	code, _ = get(t, s, "/apis/coordination.k8s.io/v1/namespaces/ns/leases")
	require.Equal(t, http.StatusNotFound, code)
	_, body, _ = doAccept(t, s, "/apis", aggregatedAccept)
	require.NotContains(t, strs(gjson.GetBytes(body, "items.#.metadata.name")), "coordination.k8s.io")

	// A custom resource joins the built-ins, its group after theirs.
	s.AddResource(httpwatch.Resource{Group: "example.com", Version: "v1", Resource: "widgets"}, watchtest.Definition{Kind: "Widget", Namespaced: true})
	_, body, _ = doAccept(t, s, "/apis", aggregatedAccept)
	names := strs(gjson.GetBytes(body, "items.#.metadata.name"))
	require.Equal(t, "example.com", names[len(names)-1])
	require.Equal(t, "storagemigration.k8s.io", names[len(names)-2])
}
