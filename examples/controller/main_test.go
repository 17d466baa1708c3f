package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/listwatch/listwatch/examples/internal/clitest"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/listwatch/listwatch/watchtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// configMapServer serves configmaps in ns "ns", leases, events and secrets.
func configMapServer(t *testing.T) *watchtest.Server {
	t.Helper()
	s := watchtest.NewServer()
	t.Cleanup(s.Close)
	s.AddResource(watchtest.Leases, watchtest.Definition{})
	s.AddResource(watchtest.Events, watchtest.Definition{})
	s.AddResource(watchtest.Secrets, watchtest.Definition{})
	return s
}

func configMap(name, labels, data string) string {
	return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns","labels":%s},"data":%s}`, name, labels, data)
}

// start runs the controller with args until the test ends; it returns
// its log and a function that stops it and returns Run's error.
func start(t *testing.T, args ...string) (*testlog.Log, func() error) {
	t.Helper()
	a := newApp()
	logger, log := testlog.NewLogger()
	a.Logger = logger
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, append([]string{"--health-addr", ""}, args...), setup) }()
	stop := func() error {
		cancel()
		select {
		case err := <-done:
			done <- err
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("Run did not return")
			return nil
		}
	}
	t.Cleanup(func() { _ = stop() })
	return log, stop
}

// Each configmap labelled app gets a secret it controls with its data,
// kept up to date, with an Event per write; the replica leads on Lease
// cm2secret and releases it when stopped.
func TestCopiesConfigMapsToSecrets(t *testing.T) {
	s := configMapServer(t)
	_, err := s.Create(watchtest.ConfigMaps, configMap("a", `{"app":"web"}`, `{"k":"v1"}`))
	require.NoError(t, err)
	_, err = s.Create(watchtest.ConfigMaps, configMap("plain", `{}`, `{"k":"v"}`))
	require.NoError(t, err)
	log, stop := start(t, "--server", s.URL, "--lease-namespace", "ns", "--identity", "me")

	secret := func() string {
		o, err := s.Get(watchtest.Secrets, "ns", "a-copy")
		if err != nil {
			return ""
		}
		return o.Get("data.k").String()
	}
	require.Eventually(t, func() bool { return secret() == "djE=" }, 10*time.Second, 5*time.Millisecond, "base64 of v1")
	cm, err := s.Get(watchtest.ConfigMaps, "ns", "a")
	require.NoError(t, err)
	sec, err := s.Get(watchtest.Secrets, "ns", "a-copy")
	require.NoError(t, err)
	assert.Equal(t, cm.UID(), sec.Get("metadata.ownerReferences.0.uid").String())
	assert.True(t, sec.Get("metadata.ownerReferences.0.controller").Bool())
	lease, err := s.Get(watchtest.Leases, "ns", "cm2secret")
	require.NoError(t, err)
	assert.Equal(t, "me", lease.Get("spec.holderIdentity").String())

	_, err = s.Update(watchtest.ConfigMaps, configMap("a", `{"app":"web"}`, `{"k":"v2"}`))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return secret() == "djI=" }, 10*time.Second, 5*time.Millisecond, "base64 of v2")
	require.Eventually(t, func() bool {
		var n int64
		for _, e := range s.List(watchtest.Events, "ns") {
			n += max(1, e.Get("series.count").Int()) // repeats are one Event with a series
		}
		return n == 2
	}, 10*time.Second, 5*time.Millisecond, "an Event per write")
	_, err = s.Get(watchtest.Secrets, "ns", "plain-copy")
	assert.Error(t, err, "an unlabelled configmap is not copied")

	require.NoError(t, stop())
	lease, err = s.Get(watchtest.Leases, "ns", "cm2secret")
	require.NoError(t, err)
	assert.Empty(t, lease.Get("spec.holderIdentity").String(), "lease released")
	assert.Empty(t, log.Lines(slog.LevelWarn), "nothing above Info")
}

// On the embedded demo server the controller syncs, leads and copies
// until stopped, then shuts down cleanly.
func TestDemoRunsUntilStopped(t *testing.T) {
	clitest.DemoEnv(t)
	log, stop := start(t)
	require.Eventually(t, func() bool {
		for _, l := range log.Lines(slog.LevelInfo) {
			if strings.Contains(l.Text, "app: leader") && strings.Contains(l.Text, "self=true") {
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond, "leading on the demo server:\n%s", log.All())
	require.NoError(t, stop())
	assert.Empty(t, log.Lines(slog.LevelWarn))
}

func TestBadFlags(t *testing.T) {
	for args, want := range map[string]string{
		"configmaps":     `unexpected argument "configmaps"`,
		"--no-such-flag": "flag provided but not defined",
	} {
		a := newApp()
		a.Flags.SetOutput(io.Discard)
		err := a.Run(t.Context(), []string{args}, setup)
		assert.ErrorContains(t, err, want, args)
	}
}
