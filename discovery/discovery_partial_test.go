package discovery_test

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newDiscoveryClient(t *testing.T, f *fakeDiscovery) (*httpwatch.Client, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: f.URL, QPS: -1, Clock: clk})
	require.NoError(t, err)
	c.RetryMax = 0 // the 503s of the API that is down are the test's, not the retry loop's
	t.Cleanup(c.CloseIdleConnections)
	return c, clk
}

var (
	corePods    = httpwatch.Resource{Version: "v1", Resource: "pods"}
	deployments = httpwatch.Resource{Group: "apps", Version: "v1", Resource: "deployments"}
	nodes       = httpwatch.Resource{Version: "v1", Resource: "nodes"}
	podMetrics  = httpwatch.Resource{Group: "metrics.k8s.io", Version: "v1beta1", Resource: "pods"}
)

// One group version answering 503 (metrics-server down) fails only itself:
// what answered is kept and used, requests never rediscover, and the
// failed group version is read again at a bounded rate, by the request
// that needs it once it is due (decision 23).
func TestDiscoveryKeepsWhatAnswered(t *testing.T) {
	for _, mode := range []discoveryMode{legacyDiscovery, v2beta1Discovery} {
		t.Run(string(mode), func(t *testing.T) {
			f := newFakeDiscovery(t, mode)
			c, clk := newDiscoveryClient(t, f)
			ctx := context.Background()

			_, err := c.Resource(corePods).Get(ctx, "web")
			assert.ErrorIs(t, err, httpwatch.ErrNamespaceRequired, "the core group answered")
			first := f.discoveryReads()

			rs, err := c.Discover(ctx)
			require.Error(t, err, "Discover names what failed")
			assert.Contains(t, err.Error(), "metrics.k8s.io/v1beta1")
			assert.True(t, hasResource(rs, deployments), "and returns what answered")
			assert.Equal(t, first, f.discoveryReads(), "Discover within the retry wait reads nothing")

			// Many concurrent requests: none rediscovers, none waits.
			var wg sync.WaitGroup
			for range 10 {
				wg.Add(3)
				go func() {
					defer wg.Done()
					_, err := c.Resource(deployments).Get(ctx, "web")
					assert.ErrorIs(t, err, httpwatch.ErrNamespaceRequired)
				}()
				go func() {
					defer wg.Done()
					_, err := c.Resource(nodes).Get(ctx, "node-1")
					assert.True(t, httpwatch.IsNotFound(err), "a cluster-scoped Get goes to the server: %v", err)
				}()
				go func() {
					defer wg.Done()
					// Its group version failed: the scope check cannot tell,
					// so the request goes and meets the 503.
					_, err := c.Resource(podMetrics).Get(ctx, "web")
					assert.Equal(t, 503, statusCode(err), "%v", err)
				}()
			}
			testwait.Group(t, &wg, "the concurrent Gets to return")
			assert.Equal(t, first, f.discoveryReads(), "no request rediscovers")

			// Retries: after 2 s, then 4 s, doubling (decision 23).
			for _, step := range []struct {
				wait  time.Duration
				reads int
			}{{time.Second, 0}, {time.Second, 1}, {2 * time.Second, 0}, {2 * time.Second, 1}, {4 * time.Second, 0}, {4 * time.Second, 1}} {
				before := f.discoveryReads()
				clk.Step(step.wait)
				for range 3 {
					_, err := c.Resource(podMetrics).Get(ctx, "web")
					require.Equal(t, 503, statusCode(err), "%v", err)
				}
				require.Equal(t, step.reads, f.discoveryReads()-before, "after %v more", step.wait)
			}

			f.metricsUp.Store(true)
			clk.Step(16 * time.Second)
			_, err = c.Resource(podMetrics).Get(ctx, "web")
			assert.ErrorIs(t, err, httpwatch.ErrNamespaceRequired, "read again once due, the group version is known")
			rs, err = c.Discover(ctx)
			require.NoError(t, err)
			assert.True(t, hasResource(rs, podMetrics))
		})
	}
}

// When the resource's own group version failed, a 404 cannot be checked
// against discovery; it still does not read as "gone", and says why
// (decision 24).
func TestDiscoveryCannotTell(t *testing.T) {
	f := newFakeDiscovery(t, legacyDiscovery)
	c, _ := newDiscoveryClient(t, f)
	podz := httpwatch.Resource{Group: "metrics.k8s.io", Version: "v1beta1", Resource: "podz", Namespace: "default"}
	_, err := c.Resource(podz).List(context.Background(), httpwatch.ListOptions{})
	require.ErrorIs(t, err, discovery.ErrUnknownResource)
	assert.False(t, httpwatch.IsNotFound(err))
	assert.True(t, httpwatch.IsPermanent(err))
	assert.Contains(t, err.Error(), "discovery cannot tell which")
	assert.Contains(t, err.Error(), "metrics.k8s.io/v1beta1")
	assert.Equal(t, 404, statusCode(err), "the server's answer stays in the chain")
}

// Requests arriving together at a new client share one discovery read
// (decision 23).
func TestDiscoveryFirstReadIsShared(t *testing.T) {
	for _, mode := range []discoveryMode{legacyDiscovery, v2Discovery} {
		f := newFakeDiscovery(t, mode)
		f.metricsUp.Store(true)
		c, _ := newDiscoveryClient(t, f)
		var wg sync.WaitGroup
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := c.Resource(corePods).Get(context.Background(), "web")
				assert.ErrorIs(t, err, httpwatch.ErrNamespaceRequired)
			}()
		}
		testwait.Group(t, &wg, "the Gets sharing the first discovery read to return")
		want := 2 // /api and /apis
		if mode == legacyDiscovery {
			want += 3 // v1, apps/v1, metrics.k8s.io/v1beta1
		}
		assert.Equal(t, want, f.discoveryReads(), mode)
	}
}

// The recorded server's aggregated (v2) documents and its plain ones
// describe the same resources, and v2beta1 reads as v2 (decision 23).
func TestDiscoveryAggregatedMatchesLegacy(t *testing.T) {
	read := func(mode discoveryMode) []string {
		f := newFakeDiscovery(t, mode)
		f.metricsUp.Store(true)
		c, _ := newDiscoveryClient(t, f)
		rs, err := c.Discover(context.Background())
		require.NoError(t, err)
		if mode != legacyDiscovery {
			require.Equal(t, 2, f.discoveryReads(), "%s: /api and /apis, aggregated", mode)
		}
		var out []string
		for _, r := range rs {
			sort.Strings(r.Subresources)
			sort.Strings(r.Verbs)
			out = append(out, strings.Join([]string{r.String(), r.Kind, r.Singular, boolWord(r.Namespaced, "namespaced"),
				boolWord(r.Preferred, "preferred"), strings.Join(r.ShortNames, ","), strings.Join(r.Verbs, ","),
				strings.Join(r.Subresources, ",")}, " "))
		}
		return out
	}
	legacy := read(legacyDiscovery)
	require.Greater(t, len(legacy), 20)
	assert.Contains(t, legacy, "deployments.v1.apps Deployment deployment namespaced preferred deploy create,delete,deletecollection,get,list,patch,update,watch scale,status")
	assert.Equal(t, legacy, read(v2Discovery))
	assert.Equal(t, legacy, read(v2beta1Discovery))
}

func boolWord(b bool, word string) string {
	if b {
		return word
	}
	return "-"
}

func hasResource(rs []discovery.APIResource, r httpwatch.Resource) bool {
	for _, a := range rs {
		if a.Group == r.Group && a.Version == r.Version && a.Resource == r.Resource {
			return true
		}
	}
	return false
}

func statusCode(err error) int {
	var se *httpwatch.StatusError
	if !errors.As(err, &se) {
		return 0
	}
	return se.Code
}

// A first read cut short by its caller's context is not kept, nor backed
// off: the next request reads again at once (decision 23).
func TestDiscoveryCutShortIsReadAgain(t *testing.T) {
	f := newFakeDiscovery(t, legacyDiscovery)
	f.metricsUp.Store(true)
	reached, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	hold := func(path string) {
		if path == "/apis/apps/v1" && first.CompareAndSwap(false, true) {
			close(reached)
			<-release
		}
	}
	f.hold.Store(&hold)
	defer close(release)
	c, _ := newDiscoveryClient(t, f)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := c.Resource(deployments).Get(ctx, "web"); done <- err }()
	select {
	case <-reached:
	case <-time.After(10 * time.Second):
		t.Fatal("discovery never asked for apps/v1")
	}
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled request did not return")
	}

	_, err := c.Resource(deployments).Get(context.Background(), "web")
	assert.ErrorIs(t, err, httpwatch.ErrNamespaceRequired, "apps/v1 is read again at once")
}

// Discover itself reads again what failed, a root or a group version,
// once its retry wait has passed, and not before (decision 23).
func TestDiscoverRetriesWhatFailedOnceDue(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mode      discoveryMode
		apisDown  bool // else metrics.k8s.io/v1beta1 is down
		failed    string
		recovered httpwatch.Resource
	}{
		{"group version down, legacy", legacyDiscovery, false, "metrics.k8s.io/v1beta1", podMetrics},
		{"group version stale, aggregated", v2Discovery, false, "metrics.k8s.io/v1beta1", podMetrics},
		{"apis root down, legacy", legacyDiscovery, true, "/apis", deployments},
		{"apis root down, aggregated", v2Discovery, true, "/apis", deployments},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeDiscovery(t, tc.mode)
			f.metricsUp.Store(tc.apisDown)
			f.apisDown.Store(tc.apisDown)
			c, clk := newDiscoveryClient(t, f)
			ctx := context.Background()

			rs, err := c.Discover(ctx)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.failed)
			assert.True(t, hasResource(rs, corePods), "what answered is returned")
			assert.False(t, hasResource(rs, tc.recovered))

			f.metricsUp.Store(true)
			f.apisDown.Store(false)
			reads := f.discoveryReads()
			clk.Step(time.Second) // the first retry waits 2 s
			_, err = c.Discover(ctx)
			require.Error(t, err, "within the retry wait, what failed is not read again")
			assert.Equal(t, reads, f.discoveryReads())

			clk.Step(time.Second)
			rs, err = c.Discover(ctx)
			require.NoError(t, err, "once due, what failed is read again")
			assert.True(t, hasResource(rs, tc.recovered))
			assert.True(t, hasResource(rs, corePods))
		})
	}
}

// When a request has /apis read again (legacy discovery), the group
// versions that failed and are due are read with it, and those that
// answered are not (decision 23).
func TestRootReadAgainRetriesFailedGroupVersions(t *testing.T) {
	f := newFakeDiscovery(t, legacyDiscovery)
	c, clk := newDiscoveryClient(t, f)
	ctx := context.Background()
	_, err := c.Discover(ctx)
	require.Error(t, err, "metrics.k8s.io/v1beta1 is down")

	f.metricsUp.Store(true)
	clk.Step(5 * time.Second) // /apis and apps/v1 are due for a recheck, metrics.k8s.io/v1beta1 for a retry
	before := len(f.discoveryPaths())
	// A group version /apis does not list has /apis read again.
	_, err = c.Resource(httpwatch.Resource{Group: "apps", Version: "v2", Resource: "deployments", Namespace: "shop"}).Get(ctx, "web")
	require.ErrorIs(t, err, discovery.ErrUnknownResource)
	assert.Equal(t, []string{"/apis", "/apis/metrics.k8s.io/v1beta1"}, f.discoveryPaths()[before:])

	rs, err := c.Discover(ctx)
	require.NoError(t, err, "metrics.k8s.io/v1beta1 was read again with /apis")
	assert.True(t, hasResource(rs, podMetrics))
	assert.Len(t, f.discoveryPaths(), before+2, "and Discover has nothing left to read")
}
