package main

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/examples/internal/clitest"
	"github.com/listwatch/listwatch/shard"
	"github.com/listwatch/listwatch/watchtest"
)

// fastLeases: renewed every 400 ms, given up after 2 s.
var fastLeases = []string{"--lease-duration", "3s"}

// labelled returns the keys a replica labelled.
func labelled(lines []string) []string {
	var out []string
	for _, l := range lines {
		if key, ok := strings.CutPrefix(l, "labelled "); ok {
			out = append(out, key)
		}
	}
	return out
}

// Two replicas with --shards 2 label every configmap once between them;
// once each sees the other, the configmaps created are labelled by their
// rendezvous owner. (Before that, a replica alone owns every key.)
func TestShardsSplitKeys(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s := configMapServer(t, "a", "b", "c", "d")
	ids := []string{"r1", "r2"}
	var rs []*clitest.Running
	for _, id := range ids {
		args := append([]string{"--server", s.URL, "--shards", "2", "--identity", id}, fastLeases...)
		rs = append(rs, clitest.Start(ctx, run, args...))
	}
	for _, r := range rs {
		r.Stderr.WaitFor(ctx, t, "both members", clitest.Contains(`^members: \[r1 r2\]$`))
	}
	later := []string{"e", "f", "g", "h", "i", "j", "k", "l"}
	for _, n := range later {
		_, err := s.Create(watchtest.ConfigMaps, `{"metadata":{"name":"`+n+`","namespace":"ns"}}`)
		require.NoError(t, err)
	}
	all := len(later) + 4
	require.Eventually(t, func() bool {
		return len(labelled(rs[0].Stdout.Lines()))+len(labelled(rs[1].Stdout.Lines())) >= all
	}, 20*time.Second, 10*time.Millisecond)
	for _, r := range rs {
		r.Stop()
		require.NoError(t, r.Wait(t))
	}
	count := map[string]int{}
	for i, r := range rs {
		for _, key := range labelled(r.Stdout.Lines()) {
			count[key]++
			if key > "ns/d" {
				assert.Equal(t, ids[i], shard.Owner(key, ids), "%s labelled by its owner", key)
			}
		}
	}
	assert.Len(t, count, all)
	for key, n := range count {
		assert.Equal(t, 1, n, "%s labelled once", key)
	}
}

// With --leader-elect one of two replicas leads and reconciles; when it
// shuts down it releases the lease and the other takes over at once and
// reconciles what changed since.
func TestLeaderElectHandsOverOnShutdown(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s := configMapServer(t, "a")
	start := func(id string) *clitest.Running {
		args := append([]string{"--server", s.URL, "--leader-elect", "--identity", id}, fastLeases...)
		return clitest.Start(ctx, run, args...)
	}
	first := start("l1")
	first.Stderr.WaitFor(ctx, t, "l1 leads", clitest.Contains(`^leader: l1$`))
	first.Stdout.WaitFor(ctx, t, "l1 labels", clitest.Contains(`^labelled ns/a$`))
	second := start("l2")
	second.Stderr.WaitFor(ctx, t, "l2 sees l1", clitest.Contains(`^leader: l1$`))
	first.Stop()
	require.NoError(t, first.Wait(t))
	_, err := s.Create(watchtest.ConfigMaps, `{"metadata":{"name":"b","namespace":"ns"}}`)
	require.NoError(t, err)
	second.Stderr.WaitFor(ctx, t, "l2 leads", clitest.Contains(`^leader: l2$`))
	second.Stdout.WaitFor(ctx, t, "l2 labels what changed", clitest.Contains(`^labelled ns/b$`))
	second.Stop()
	require.NoError(t, second.Wait(t))
	assert.NotContains(t, second.Stdout.Lines(), "labelled ns/a", "ns/a was labelled already")
}

// A replica that cannot read configmaps (here it may not list them) never
// stands for election: it exits with the error, the lease untouched.
func TestLeaderElectExitsWhenCachesCannotSync(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	s := configMapServer(t)
	// Every time: both informers' watch-lists and lists are refused (a
	// watch-list's refusal is routine, a paged list replaces it; the
	// list's is the error).
	s.FailNext(watchtest.Failure{Code: http.StatusForbidden, Verbs: []string{"list", "watch"}, Times: 1000})
	args := append([]string{"--server", s.URL, "--leader-elect", "--identity", "l1"}, fastLeases...)
	r := clitest.Start(ctx, run, args...)
	err := r.Wait(t)
	require.ErrorContains(t, err, "403 Forbidden", "%q", r.Stderr.Lines())
	require.NoError(t, ctx.Err(), "returned on the error, not at the deadline")
	_, err = s.Get(watchtest.Leases, "default", "listwatch-controller")
	assert.Error(t, err, "no lease taken")
	assert.False(t, regexp.MustCompile(`^leader:`).MatchString(strings.Join(r.Stderr.Lines(), "\n")))
}
