package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/examples/internal/clitest"
	"github.com/listwatch/listwatch/shard"
	"github.com/listwatch/listwatch/watchtest"
)

var fastLeases = []string{"--lease-duration", "3s", "--renew-deadline", "2s", "--retry-period", "500ms"}

func configMapServer(t *testing.T, names ...string) *watchtest.Server {
	t.Helper()
	s := watchtest.NewServer()
	t.Cleanup(s.Close)
	s.AddResource(watchtest.Leases, watchtest.Definition{})
	for _, n := range names {
		_, err := s.Create(watchtest.ConfigMaps, fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns"}}`, n))
		require.NoError(t, err)
	}
	return s
}

// spanKeys returns the keys of the span lines, each with who reconciled it.
func spanKeys(lines []string) map[string][]string {
	out := map[string][]string{}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) == 7 && f[0] == "span" {
			out[f[2]] = append(out[f[2]], f[1])
		}
	}
	return out
}

// Two replicas with --shards 2 split the configmaps by rendezvous hashing:
// each reconciles exactly its keys, once.
func TestShardsSplitKeys(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	s := configMapServer(t, names...)
	var rs []*clitest.Running
	for _, id := range []string{"r1", "r2"} {
		args := append([]string{"--server", s.URL, "--resource", "configmaps", "--shards", "2", "--identity", id, "--spans"}, fastLeases...)
		rs = append(rs, clitest.Start(ctx, run, args...))
	}
	for _, r := range rs {
		r.Stderr.WaitFor(ctx, t, "both members", clitest.Contains(`^members: r1,r2 at`))
	}
	require.Eventually(t, func() bool {
		return len(spanKeys(append(rs[0].Stdout.Lines(), rs[1].Stdout.Lines()...))) == len(names)
	}, 20*time.Second, 10*time.Millisecond)
	for _, r := range rs {
		r.Stop()
		require.NoError(t, r.Wait(t))
	}
	got := spanKeys(append(rs[0].Stdout.Lines(), rs[1].Stdout.Lines()...))
	for _, n := range names {
		key := "ns/" + n
		assert.Equal(t, []string{shard.Owner(key, []string{"r1", "r2"})}, got[key], key)
	}
}

// With --leader-elect one of two replicas leads and reconciles; when it
// shuts down it releases the lease and the other takes over at once.
func TestLeaderElectHandsOverOnShutdown(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s := configMapServer(t, "a")
	start := func(id string) *clitest.Running {
		args := append([]string{"--server", s.URL, "--resource", "configmaps", "--leader-elect", "--identity", id, "--spans"}, fastLeases...)
		return clitest.Start(ctx, run, args...)
	}
	first := start("l1")
	first.Stderr.WaitFor(ctx, t, "l1 leads", clitest.Contains(`^leading: l1 since`))
	first.Stdout.WaitFor(ctx, t, "l1 reconciles", clitest.Contains(`^span l1 ns/a `))
	second := start("l2")
	second.Stderr.WaitFor(ctx, t, "l2 sees l1", clitest.Contains(`^leader: l1$`))
	first.Stop()
	require.NoError(t, first.Wait(t))
	assert.True(t, clitest.Contains(`^stopped leading: l1 at`)(first.Stderr.Lines()))
	second.Stderr.WaitFor(ctx, t, "l2 leads", clitest.Contains(`^leading: l2 since`))
	second.Stdout.WaitFor(ctx, t, "l2 reconciles", clitest.Contains(`^span l2 ns/a `))
	second.Stop()
	require.NoError(t, second.Wait(t))
}

// A leader whose controller cannot run (here it may not list configmaps)
// does not hold on to the lease doing nothing: it gives the lease up and
// exits with the controller's error, so another replica can try.
func TestLeaderElectExitsWhenControllerFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	s := configMapServer(t)
	// Twice: the watch-list's refusal is routine (a paged list replaces
	// it); the list's is the error.
	s.FailNext(watchtest.Failure{Code: http.StatusForbidden, Verbs: []string{"list", "watch"}, Times: 2})
	args := append([]string{"--server", s.URL, "--resource", "configmaps", "--leader-elect", "--identity", "l1"}, fastLeases...)
	r := clitest.Start(ctx, run, args...)
	err := r.Wait(t)
	require.ErrorContains(t, err, "403 Forbidden", "%q", r.Stderr.Lines())
	assert.True(t, clitest.Contains(`^leading: l1 since`)(r.Stderr.Lines()), "l1 led")
	require.NoError(t, ctx.Err(), "returned on the controller's failure, not at the deadline")
	raw, err := s.Get(watchtest.Leases, "default", "listwatch-controller")
	require.NoError(t, err)
	assert.NotContains(t, raw.String(), `"holderIdentity"`, "lease released")
}

// A server that does not serve leases ends a --shards run at once with the
// member's reason, instead of leaving a controller that owns no key idling
// until it is stopped (decision 25).
func TestShardsEndWhenLeasesAreNotServed(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	s := watchtest.NewServer()
	s.Withhold(watchtest.Leases) // a server without leases
	t.Cleanup(s.Close)
	args := append([]string{"--server", s.URL, "--resource", "configmaps", "--shards", "2", "--identity", "r1"}, fastLeases...)
	r := clitest.Start(ctx, run, args...)
	err := r.Wait(t)
	require.ErrorIs(t, err, shard.ErrNotServed, "%q", r.Stderr.Lines())
	require.NoError(t, ctx.Err(), "returned on the member's failure, not at the deadline")
	for _, l := range r.Stderr.Lines() {
		assert.NotContains(t, l, "warning:", "the member's Logger reports failures; no second line per round")
	}
}
