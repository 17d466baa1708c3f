package kubeconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// aliasedExtra is a small kubeconfig whose as-user-extra keys all alias
// one list: n keys times n values once expanded.
func aliasedExtra(n int) string {
	var b strings.Builder
	b.WriteString("clusters: [{name: c, cluster: {server: \"https://h\"}}]\n")
	b.WriteString("contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n")
	b.WriteString("users:\n- name: u\n  user:\n    as: someone\n    as-user-extra:\n      k0: &l [")
	b.WriteString(strings.Repeat("a,", n-1) + "a]\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "      k%d: *l\n", i)
	}
	return b.String()
}

// aliasedUsers is a smaller one whose users all alias one body, itself
// aliasing a list in each of its extra keys.
func aliasedUsers(users, keys int) string {
	var b strings.Builder
	b.WriteString("clusters: [{name: c, cluster: {server: \"https://h\"}}]\n")
	b.WriteString("contexts: [{name: x, context: {cluster: c, user: u0}}]\ncurrent-context: x\n")
	b.WriteString("users:\n- name: u0\n  user: &b\n    as: someone\n    as-user-extra:\n      k0: &l [")
	b.WriteString(strings.Repeat("a,", keys-1) + "a]\n")
	for i := 1; i < keys; i++ {
		fmt.Fprintf(&b, "      k%d: *l\n", i)
	}
	for i := 1; i < users; i++ {
		fmt.Fprintf(&b, "- {name: u%d, user: *b}\n", i)
	}
	return b.String()
}

// A kubeconfig whose aliases expand to far more than it holds is refused,
// as yaml's own decoder and kubectl refuse it, before the expansion costs
// memory.
func TestLoadRefusesExcessiveAliasing(t *testing.T) {
	tests := []struct {
		name string
		yaml string
	}{
		{"extra keys alias one list", aliasedExtra(1500)},
		{"users alias one body", aliasedUsers(150, 100)},
		{"nested aliases", "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n" +
			"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n" +
			"g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g,*g]\nclusters: *h\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Logf("%d bytes", len(tt.yaml))
			path := filepath.Join(t.TempDir(), "config")
			require.NoError(t, os.WriteFile(path, []byte(tt.yaml), 0o600))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Load(path, "")
			runtime.ReadMemStats(&after)
			require.ErrorContains(t, err, "excessive aliasing")
			var ke *Error
			require.ErrorAs(t, err, &ke)
			require.Equal(t, path, ke.File)
			// A safety bound, not a measurement: expanding costs hundreds
			// of megabytes, refusing a few.
			require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(32<<20))
		})
	}
}

// Aliases within the budget still load, and an anchor that contains
// itself is an error, not endless recursion.
func TestLoadAliasesWithinBudget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	require.NoError(t, os.WriteFile(path, []byte(aliasedExtra(20)), 0o600))
	cfg, err := Load(path, "")
	require.NoError(t, err)
	require.Len(t, cfg.Impersonate.Extra, 20)
	require.Len(t, cfg.Impersonate.Extra["k19"], 20)

	require.NoError(t, os.WriteFile(path, []byte("clusters: &a [{name: c, cluster: {server: x}}, *a]\n"), 0o600))
	_, err = Load(path, "")
	require.ErrorContains(t, err, "contains an alias of itself")
}
