package listwatch

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/shard"
	"github.com/listwatch/listwatch/snapshot"
	"github.com/listwatch/listwatch/testkit/leasetest"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

// decision 20: every informer is named after its source's resource, with its namespace,
// in its errors and logs (reflector.NameOf), and its failures name the
// path they were about: on the client itself, on a shard member's Source,
// and resumed from a snapshot. The server serves no such resource, so each
// fails at once, permanently.
func TestInformerIsNamedAfterItsResource(t *testing.T) {
	s := watchtest.NewServer()
	t.Cleanup(s.Close)
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL, QPS: -1})
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)
	namespaced := httpwatch.Resource{Version: "v1", Resource: "nosuchthings", Namespace: "ns"}
	grouped := httpwatch.Resource{Group: "nosuch.example.com", Version: "v2", Resource: "things"}
	member, err := shard.New(shard.Config{Leases: client.Resource(leasetest.Resource), Group: "g", Identity: "a"})
	require.NoError(t, err)

	for _, tc := range []struct {
		name, want, path string
		informer         func(t *testing.T) *Informer
	}{
		{"namespaced", "nosuchthings.v1 in ns", "/api/v1/namespaces/ns/nosuchthings", func(*testing.T) *Informer {
			return NewInformer(client.Resource(namespaced), 0)
		}},
		{"cluster-wide, in a group", "things.v2.nosuch.example.com", "/apis/nosuch.example.com/v2/things", func(*testing.T) *Informer {
			return NewInformer(client.Resource(grouped), 0)
		}},
		{"sharded", "nosuchthings.v1 in ns", "/api/v1/namespaces/ns/nosuchthings", func(*testing.T) *Informer {
			return NewInformer(member.Source(client.Resource(namespaced)), 0)
		}},
		{"warm-started", "nosuchthings.v1 in ns", "/api/v1/namespaces/ns/nosuchthings", func(t *testing.T) *Informer {
			rc := client.Resource(namespaced)
			inf := NewInformer(rc, 0)
			inf.Snapshot = snapshot.Options{Dir: t.TempDir()}
			key, err := snapshotKey(rc, inf, inf.Snapshot)
			require.NoError(t, err)
			snap := &snapshot.Snapshot{Key: key, ResourceVersion: "5", Written: time.Now()}
			require.NoError(t, snapshot.WriteFile(inf.Snapshot.WithDefaults().Path(key), snap))
			return inf
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inf := tc.informer(t)
			inf.Reflector.PagedList = true
			log := &testlog.Log{}
			inf.Logger = slog.New(log)
			run(t, inf)
			err := inf.Wait(testwait.Context(t))
			require.ErrorIs(t, err, discovery.ErrUnknownResource)
			assert.Contains(t, err.Error(), tc.want+" not synced")
			var se *reflector.SyncError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.want, se.Resource)
			// A warm start says so at Info first (decision 32).
			require.Eventually(t, func() bool { return len(log.Lines(slog.LevelWarn)) > 0 }, wait, time.Millisecond)
			line := log.Lines(slog.LevelWarn)[0].String()
			assert.Contains(t, line, "ERROR reflector: ")
			assert.Contains(t, line, "resource="+tc.want+" ")
			assert.Contains(t, line, "path="+tc.path+" ")
		})
	}
}
