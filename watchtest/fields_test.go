package watchtest_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/watchtest"
)

// Field selectors name only the fields the real server supports for the
// resource, and a misspelt one is its 400 rather than a selector that
// matches nothing while the informer syncs; label selectors'
// syntax errors are its 400 too. Messages are kube-apiserver 1.37's
// (decision 7).
func TestSelectorsCheckedPerResource(t *testing.T) {
	s := newServer(t)
	s.AddResource(widgets, watchtest.Definition{Kind: "Widget", Namespaced: true, SelectableFields: []string{"spec.color"}})
	s.AddResource(watchtest.Leases, watchtest.Definition{})
	s.AddResource(watchtest.Secrets, watchtest.Definition{})
	for _, tc := range []struct {
		path, field, label string
		code               int
		message            string
	}{
		{"/api/v1/pods", "spec.nodename=n1", "", 400, "field label not supported: spec.nodename"},
		{"/api/v1/pods", "spec.nodeName=n1,status.phase!=Running,spec.hostNetwork=true", "", 200, ""},
		{"/api/v1/namespaces/p/pods", "status.podIP=1.2.3.4,metadata.namespace=p", "", 200, ""},
		{"/api/v1/namespaces", "status.phase=Active", "", 200, ""},
		{"/api/v1/namespaces", "metadata.namespace=x", "", 400, "field label not supported: metadata.namespace"},
		{"/api/v1/configmaps", "metadata.uid=x", "", 400, `"metadata.uid" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{"/api/v1/secrets", "metadata.uid=x", "", 400, "field label not supported: metadata.uid"},
		{"/apis/apps/v1/deployments", "status.replicas=1", "", 400, `"status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{"/apis/coordination.k8s.io/v1/leases", "metadata.name=l", "", 200, ""},
		{"/apis/example.com/v1/widgets", "spec.color=red", "", 200, ""},
		{"/apis/example.com/v1/widgets", "spec.size=1", "", 400, "field label not supported: spec.size"},
		{"/api/v1/pods", "x", "", 400, "invalid selector: 'x'; can't understand 'x'"},
		{"/api/v1/pods", "", "a===b", 400, "unable to parse requirement: found '=', expected: identifier"},
	} {
		for _, verb := range []string{"list", "watch"} {
			q := url.Values{"fieldSelector": {tc.field}, "labelSelector": {tc.label}}
			if verb == "watch" {
				q.Set("watch", "1")
				q.Set("timeoutSeconds", "0")
				if tc.code == 200 {
					continue // a watch that works streams; the list told
				}
			}
			code, body := get(t, s, tc.path+"?"+q.Encode())
			assert.Equal(t, tc.code, code, "%s %s %s: %s", verb, tc.path, tc.field, body)
			if tc.code != http.StatusOK {
				assert.Equal(t, "BadRequest", gjson.GetBytes(body, "reason").String())
				assert.Equal(t, tc.message, gjson.GetBytes(body, "message").String(), "%s %s %s", verb, tc.path, tc.field)
			}
		}
	}
}
