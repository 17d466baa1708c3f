package watchtest_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/watchtest"
)

// listNames lists path with fieldSelector and returns the items' names.
func listNames(t *testing.T, s *watchtest.Server, path, fieldSelector string) []string {
	t.Helper()
	code, body := get(t, s, path+"?"+url.Values{"fieldSelector": {fieldSelector}}.Encode())
	require.Equal(t, http.StatusOK, code, "%s: %s", fieldSelector, body)
	return names(gjson.GetBytes(body, "items").Array())
}

// A pod's selectable fields that the pod sent left out read as the real
// server's defaults: a pod without status is Pending, without
// restartPolicy restarts Always, and so on; a pod that sets the field is
// selected by its own value only. Decision 7.
func TestPodFieldSelectorsReadDefaults(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Pods, `{"metadata":{"name":"bare","namespace":"ns"}}`)
	mustCreate(t, s, watchtest.Pods, `{"metadata":{"name":"set","namespace":"ns"},`+
		`"spec":{"restartPolicy":"Never","hostNetwork":true,"schedulerName":"mine"},"status":{"phase":"Running"}}`)
	for _, tc := range []struct {
		field string
		want  []string
	}{
		{"status.phase=Pending", []string{"bare"}},
		{"status.phase=Running", []string{"set"}},
		{"status.phase!=Pending", []string{"set"}},
		{"spec.restartPolicy=Always", []string{"bare"}},
		{"spec.restartPolicy=Never", []string{"set"}},
		{"spec.hostNetwork=false", []string{"bare"}},
		{"spec.schedulerName=default-scheduler", []string{"bare"}},
		{"spec.nodeName=", []string{"bare", "set"}}, // no default: absent reads as empty
	} {
		assert.ElementsMatch(t, tc.want, listNames(t, s, "/api/v1/namespaces/ns/pods", tc.field), tc.field)
	}
}

// Defaults are the pod's: another resource's missing field reads as
// empty. Decision 7.
func TestNamespaceFieldSelectorHasNoPodDefaults(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Namespaces, `{"metadata":{"name":"bare"}}`)
	assert.Empty(t, listNames(t, s, "/api/v1/namespaces", "status.phase=Pending"))
	assert.Equal(t, []string{"bare"}, listNames(t, s, "/api/v1/namespaces", "status.phase="))
}

// A Job's unsupported field label is refused in batch's words, not the
// core group's. Decision 7.
func TestJobFieldLabelMessage(t *testing.T) {
	s := newServer(t)
	jobs := httpwatch.Resource{Group: "batch", Version: "v1", Resource: "jobs"}
	s.AddResource(jobs, watchtest.Definition{Kind: "Job", Namespaced: true, BuiltIn: true})
	code, body := get(t, s, "/apis/batch/v1/jobs?fieldSelector=spec.parallelism%3D1")
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Equal(t, `field label "spec.parallelism" not supported for Job`, gjson.GetBytes(body, "message").String())
	assert.Empty(t, listNames(t, s, "/apis/batch/v1/jobs", "status.successful=1"), "a field jobs support")
}

// A Failure with a Name alone hits that name in any namespace, and no
// other name. Decision 7.
func TestFailNextMatchesNameAlone(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"a","namespace":"ns"}}`)
	mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"b","namespace":"other"}}`)
	s.FailNext(watchtest.Failure{Code: http.StatusServiceUnavailable, Name: "b"})
	code, _ := get(t, s, "/api/v1/namespaces/ns/configmaps/a")
	assert.Equal(t, http.StatusOK, code, "another name")
	code, _ = get(t, s, "/api/v1/namespaces/ns/configmaps")
	assert.Equal(t, http.StatusOK, code, "a list names no object")
	code, _ = get(t, s, "/api/v1/namespaces/other/configmaps/b")
	assert.Equal(t, http.StatusServiceUnavailable, code, "the name, in any namespace")
	code, _ = get(t, s, "/api/v1/namespaces/other/configmaps/b")
	assert.Equal(t, http.StatusOK, code, "used up")
}
