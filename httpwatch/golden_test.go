package httpwatch

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/listwatch/listwatch/raw"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

// describeObject is one line naming what an Object holds.
func describeObject(o *raw.Object) string {
	s := fmt.Sprintf("%s/%s rv=%s uid=%s kind=%s apiVersion=%s", o.Namespace(), o.Name(), o.ResourceVersion(), o.UID(), o.Kind(), o.APIVersion())
	if l := o.Labels(); l != nil {
		s += " labels=" + sortedMap(l)
	}
	if a := o.Annotations(); a != nil {
		s += " annotations=" + sortedMap(a)
	}
	if o.Get("metadata.managedFields").Exists() {
		s += " managedFields"
	}
	if o.Get("metadata.deletionTimestamp").Exists() {
		s += " deleting"
	}
	return s
}

func sortedMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+":"+m[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func describeError(err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "error: %v\n", err)
	if se, ok := asStatus(err); ok {
		fmt.Fprintf(&b, "status: code=%d reason=%s retryAfter=%s details=%+v\n", se.Code, se.Reason, se.RetryAfter, se.Details)
	}
	preds := []struct {
		name string
		f    func(error) bool
	}{
		{"IsGone", IsGone}, {"IsNotFound", IsNotFound},
		{"IsConflict", IsConflict}, {"IsForbidden", IsForbidden}, {"IsUnauthorized", IsUnauthorized},
		{"IsInternalError", IsInternalError}, {"IsTooManyRequests", IsTooManyRequests},
		{"IsResourceVersionTooLarge", IsResourceVersionTooLarge},
	}
	var yes []string
	for _, p := range preds {
		if p.f(err) {
			yes = append(yes, p.name)
		}
	}
	fmt.Fprintf(&b, "true: %s\n", strings.Join(yes, " "))
	return b.String()
}

func describePage(p *Page) string {
	var b strings.Builder
	fmt.Fprintf(&b, "resourceVersion=%s continue=%q", p.ResourceVersion, p.Continue)
	if p.RemainingItemCount != nil {
		fmt.Fprintf(&b, " remainingItemCount=%d", *p.RemainingItemCount)
	}
	fmt.Fprintf(&b, " items=%d\n", len(p.Items))
	for _, o := range p.Items {
		b.WriteString(describeObject(o) + "\n")
	}
	return b.String()
}

func describeEvents(w Watcher) string {
	var b strings.Builder
	for {
		ev, err := w.Next()
		if err == io.EOF {
			b.WriteString("EOF\n")
			return b.String()
		}
		if err != nil {
			b.WriteString(describeError(err))
			return b.String()
		}
		b.WriteString(describeEvent(ev) + "\n")
	}
}

func describeEvent(ev Event) string {
	switch {
	case ev.Err != nil:
		return fmt.Sprintf("%s %s", ev.Type, strings.TrimSpace(describeError(ev.Err)))
	case ev.Object != nil:
		return fmt.Sprintf("%s %s", ev.Type, describeObject(ev.Object))
	}
	return string(ev.Type)
}

// TestGoldenFixtures replays every recorded kube-apiserver response through
// the client (list, watch or the error it becomes) and compares what comes
// out with testdata/golden. Run with -update after a deliberate change and
// read the diff.
func TestGoldenFixtures(t *testing.T) {
	for _, name := range fixtures.Names() {
		t.Run(name, func(t *testing.T) {
			fx := fixtures.Load(t, name)
			srv := serveFixture(t, name)
			rc := newTestClient(t, srv.URL).Resource(pods)
			rc.KeepManagedFields = true // the goldens show where the server sent them
			rc.c.RetryMax = 0
			var got string
			if fx.IsWatch() {
				w, err := rc.Watch(context.Background(), ListOptions{ResourceVersion: "1", AllowWatchBookmarks: true})
				if err != nil {
					got = describeError(err)
				} else {
					got = describeEvents(w)
					w.Stop()
				}
			} else {
				p, err := rc.ListPage(context.Background(), ListOptions{})
				if err != nil {
					got = describeError(err)
				} else {
					got = describePage(p)
				}
			}
			path := filepath.Join("testdata", "golden", name+".golden")
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test -run TestGoldenFixtures -update to create it")
			require.Equal(t, string(want), got)
		})
	}
}
