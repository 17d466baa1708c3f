package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Against the embedded demo server the command syncs, prints the objects
// of the first list, then one line per change and a summary, and exits
// after --events changes.
func TestDemoEvents(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBECONFIG", "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr strings.Builder
	require.NoError(t, run(ctx, []string{"--events", "3"}, &stdout, &stderr))
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	require.Len(t, lines, 30+3, "stdout: %s", stdout.String())
	for _, l := range lines[:30] {
		assert.Regexp(t, `^ADDED\s+\S+/web-\d+\s+rv=\d+$`, l, "the first list")
	}
	for _, l := range lines[30:] {
		assert.Regexp(t, `^(ADDED|MODIFIED|DELETED)\s+\S+/web-\d+\s+rv=\d+$`, l)
	}
	assert.Contains(t, stderr.String(), "synced 30 objects")
	assert.Contains(t, stderr.String(), "summary: ")
}

func TestDemoJSON(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBECONFIG", "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout strings.Builder
	require.NoError(t, run(ctx, []string{"-o", "json", "--initial=false", "--events", "1", "--resource", "pods", "-l", "app=web"}, &stdout, io.Discard))
	assert.Regexp(t, `^\{"type":"(ADDED|MODIFIED|DELETED)","key":"[a-z]+/web-\d+","resourceVersion":"\d+","object":\{`, stdout.String())
	assert.NotContains(t, stdout.String(), "managedFields", "managedFields are dropped")
}

func TestErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cases := map[string]struct {
		args []string
		want string
	}{
		"bad output":      {[]string{"-o", "yaml"}, "--output must be text or json"},
		"bad resource":    {[]string{"--resource", "pods.beta"}, "is not a version"},
		"stray argument":  {[]string{"pods"}, "unexpected argument"},
		"unreachable":     {[]string{"--server", "http://127.0.0.1:1"}, "cannot reach the server"},
		"unknown on demo": {[]string{"--resource", "gadgets.v1.example.com"}, "no such resource"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv("KUBERNETES_SERVICE_HOST", "")
			t.Setenv("KUBECONFIG", "")
			err := run(ctx, tc.args, io.Discard, io.Discard)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestParseResource(t *testing.T) {
	for in, want := range map[string]string{
		"pods":                   "/v1/pods",
		"deployments":            "apps/v1/deployments",
		"deployments.v1.apps":    "apps/v1/deployments",
		"widgets.v1.example.com": "example.com/v1/widgets",
		"configmaps.v1":          "/v1/configmaps",
	} {
		r, err := parseResource(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, r.Group+"/"+r.Version+"/"+r.Resource, in)
	}
}
