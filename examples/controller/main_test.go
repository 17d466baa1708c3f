package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/listwatch/listwatch/examples/internal/clitest"
	"github.com/listwatch/listwatch/internal/apitest"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/watchtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// configMapServer serves configmaps named names in ns, leases and events.
func configMapServer(t *testing.T, names ...string) *watchtest.Server {
	t.Helper()
	s := watchtest.NewServer()
	t.Cleanup(s.Close)
	s.AddResource(watchtest.Leases, watchtest.Definition{})
	s.AddResource(watchtest.Events, watchtest.Definition{})
	for _, n := range names {
		_, err := s.Create(watchtest.ConfigMaps, fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns"},"data":{"a":"1"}}`, n))
		require.NoError(t, err)
	}
	return s
}

func get(t *testing.T, s *watchtest.Server, name string) *raw.Object {
	t.Helper()
	o, err := s.Get(watchtest.ConfigMaps, "ns", name)
	require.NoError(t, err)
	return o
}

// reasons returns the reasons of the Events about name, with their counts.
func reasons(s *watchtest.Server, name string) map[string]int64 {
	out := map[string]int64{}
	for _, o := range s.List(watchtest.Events, "ns") {
		if o.Get("regarding.name").String() == name {
			out[o.Get("reason").String()] += max(1, o.Get("series.count").Int())
		}
	}
	return out
}

// A configmap is labelled checked=true and gets a report it owns, each
// change with an Event; the report, deleted or changed by someone else,
// is applied again because its owner is requeued; a change of the
// configmap's data updates the report.
func TestLabelsAndReports(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s := configMapServer(t, "a")
	r := clitest.Start(ctx, run, "--server", s.URL, "--workers", "2")
	r.Stdout.WaitFor(ctx, t, "a labelled", clitest.Contains(`^labelled ns/a$`))
	r.Stdout.WaitFor(ctx, t, "a reported", clitest.Contains(`^reported ns/a: 1 keys$`))
	v, _ := get(t, s, "a").Label("checked")
	assert.Equal(t, "true", v)
	report := get(t, s, "a-report")
	assert.Equal(t, "1", report.Get("data.keys").String())
	ref := report.Get("metadata.ownerReferences.0")
	assert.Equal(t, get(t, s, "a").UID(), ref.Get("uid").String())
	assert.True(t, ref.Get("controller").Bool())
	assert.True(t, ref.Get("blockOwnerDeletion").Bool())
	require.Eventually(t, func() bool { r := reasons(s, "a"); return r["Labelled"] == 1 && r["Reported"] == 1 },
		10*time.Second, 10*time.Millisecond, "an Event per change")

	_, err := s.Delete(watchtest.ConfigMaps, "ns", "a-report")
	require.NoError(t, err)
	r.Stdout.WaitFor(ctx, t, "report applied again", func(lines []string) bool {
		return countLines(lines, "reported ns/a: 1 keys") == 2
	})
	_, err = s.Update(watchtest.ConfigMaps, `{"metadata":{"name":"a","namespace":"ns","labels":{"checked":"true"}},"data":{"a":"1","b":"2"}}`)
	require.NoError(t, err)
	r.Stdout.WaitFor(ctx, t, "report updated", clitest.Contains(`^reported ns/a: 2 keys$`))
	r.Stop()
	require.NoError(t, r.Wait(t))
	assert.Equal(t, 1, countLines(r.Stdout.Lines(), "labelled ns/a"), "labelled once: the label stayed")
	assert.Zero(t, countLines(r.Stdout.Lines(), "labelled ns/a-report"), "reports are not labelled")
}

func countLines(lines []string, line string) int {
	n := 0
	for _, l := range lines {
		if l == line {
			n++
		}
	}
	return n
}

// On the demo server, whose configmaps keep being replaced without their
// labels, the controller labels and reports them until stopped, and
// shuts down cleanly.
func TestDemoLabelsUntilStopped(t *testing.T) {
	clitest.DemoEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := clitest.Start(ctx, run, "--workers", "3")
	r.Stdout.WaitFor(ctx, t, "every demo configmap labelled", func(lines []string) bool {
		n := 0
		for _, l := range lines {
			if len(l) > 9 && l[:9] == "labelled " {
				n++
			}
		}
		return n >= 12
	})
	r.Stop()
	require.NoError(t, r.Wait(t))
	assert.True(t, clitest.Contains(`^controller of configmaps on .*embedded demo server`)(r.Stderr.Lines()), "%q", r.Stderr.Lines())
}

// An unreachable server is retried while the caches wait; when the
// controller is stopped before they sync, it says why in one line.
func TestUnreachableServerIsOneClearError(t *testing.T) {
	url := apitest.Refused(t)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	r := clitest.Start(ctx, run, "--server", url)
	err := r.Wait(t)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot reach the server at "+url)
}

func TestBadFlags(t *testing.T) {
	clitest.RejectsFlags(t, run, []clitest.BadArgs{
		{Args: []string{"--workers", "0"}, Want: "--workers must be at least 1"},
		{Args: []string{"configmaps"}, Want: `unexpected argument "configmaps"`},
		{Args: []string{"--leader-elect", "--shards", "2"}, Want: "--leader-elect and --shards exclude each other"},
		{Args: []string{"--shards", "-1"}, Want: "--shards not negative"},
		{Args: []string{"--no-such-flag"}, Want: "flag provided but not defined"},
	})
}
