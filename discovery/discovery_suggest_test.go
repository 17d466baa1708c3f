package discovery_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
)

// A misspelt name qualified by its group, or by version and group, gets
// the same "did you mean" as the bare name: the suggestion looks at the
// name before the first dot (decision 23).
func TestResourceForSuggestsForQualifiedNames(t *testing.T) {
	srv := newFakeDiscovery(t, v2Discovery)
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL, QPS: -1})
	require.NoError(t, err)
	defer c.CloseIdleConnections()
	for name, want := range map[string]string{
		"deploymnts":         "(did you mean deployments in apps/v1?)",
		"deploymnts.apps":    "(did you mean deployments in apps/v1?)",
		"deploymnts.v1.apps": "(did you mean deployments in apps/v1?)",
		"cnfigmaps.v1":       "(did you mean configmaps in v1?)",
	} {
		_, err := c.ResourceFor(context.Background(), name)
		require.ErrorIs(t, err, discovery.ErrUnknownResource, name)
		assert.ErrorContains(t, err, `resource "`+name+`" `+want, name)
	}
}

// The "did you mean" ranking (decision 24): a name of two letters or fewer
// is only matched exactly (in any case), up to five letters within one
// edit, longer ones within two; the closest name wins, whatever its group;
// among equally close ones the same group version wins, then the same
// group, then a preferred version, then the server's order.
func TestSuggestionRanking(t *testing.T) {
	resource := func(plural, singular, kind string, short ...string) string {
		return fmt.Sprintf(`{"resource":%q,"singularResource":%q,"responseKind":{"kind":%q},"scope":"Namespaced","shortNames":%s}`,
			plural, singular, kind, jsonList(short))
	}
	version := func(v string, resources ...string) string {
		return fmt.Sprintf(`{"version":%q,"resources":[%s]}`, v, strings.Join(resources, ","))
	}
	group := func(name string, versions ...string) string {
		return fmt.Sprintf(`{"metadata":{"name":%q},"versions":[%s]}`, name, strings.Join(versions, ","))
	}
	list := func(groups ...string) string {
		return `{"kind":"APIGroupDiscoveryList","items":[` + strings.Join(groups, ",") + `]}`
	}
	c := discovery.New(documents{
		"/api": list(group("", version("v1",
			resource("nodes", "node", "Node", "no"),
			resource("pods", "pod", "Pod", "po")))),
		"/apis": list(
			group("toys.example.org", version("v1", resource("gizmos", "gizmo", "Gizmo"))),
			group("example.com",
				version("v1", resource("notes", "note", "Note"), resource("gizmos", "gizmo", "Gizmo")),
				version("v1beta1", resource("notes", "note", "Note")))),
	})
	for _, tc := range []struct {
		group, version, name string
		want                 string // the suggestion, "" for none
	}{
		{"", "v1", "PO", "pods"},
		{"", "v1", "px", ""}, // one edit from "po", but two letters
		{"", "v1", "pox", "pods"},
		{"", "v1", "poxx", ""}, // two edits from "pods", but four letters
		{"", "v1", "Nodes", "nodes"},
		{"example.com", "v1", "nodes", "nodes in v1"}, // not "notes", one edit away
		{"", "v1", "gizmo", "gizmos in toys.example.org/v1"},
		{"example.com", "v1beta1", "gizmo", "gizmos in example.com/v1"},
		{"example.com", "v1beta1", "note", "notes"},
		{"", "v1", "note", "notes in example.com/v1"},
	} {
		v, _, err := c.Lookup(context.Background(), tc.group, tc.version, tc.name)
		require.Equal(t, discovery.NotServed, v, "%s/%s %s", tc.group, tc.version, tc.name)
		require.ErrorIs(t, err, discovery.ErrUnknownResource)
		if tc.want == "" {
			assert.NotContains(t, err.Error(), "did you mean", "%s/%s %s", tc.group, tc.version, tc.name)
		} else {
			assert.Contains(t, err.Error(), "(did you mean "+tc.want+"?)", "%s/%s %s", tc.group, tc.version, tc.name)
		}
	}
}

func jsonList(s []string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
