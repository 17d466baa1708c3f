package store_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/store"
)

// conformance 48
func TestMetaNamespaceKey(t *testing.T) {
	for _, tc := range []struct {
		ns, name, want string
		err            error
	}{
		{"default", "web", "default/web", nil},
		{"", "node-1", "node-1", nil},
		{"default", "", "", store.ErrNoName},
	} {
		got, err := store.MetaNamespaceKey(&pod{ns: tc.ns, name: tc.name})
		require.ErrorIs(t, err, tc.err, "%s/%s", tc.ns, tc.name)
		assert.Equal(t, tc.want, got)
	}
}

// conformance 48
func TestSplitKey(t *testing.T) {
	for _, tc := range []struct {
		key, ns, name string
		bad           bool
	}{
		{key: "default/web", ns: "default", name: "web"},
		{key: "node-1", name: "node-1"},
		{key: "/web", name: "web"},
		{key: "", name: ""},
		{key: "a/b/c", bad: true},
		{key: "a//", bad: true},
	} {
		ns, name, err := store.SplitKey(tc.key)
		if tc.bad {
			require.Error(t, err, tc.key)
			assert.Contains(t, err.Error(), tc.key)
			continue
		}
		require.NoError(t, err, tc.key)
		assert.Equal(t, [2]string{tc.ns, tc.name}, [2]string{ns, name}, tc.key)
	}
}
