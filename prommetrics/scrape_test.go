package prommetrics

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/leader"
	"github.com/listwatch/listwatch/reconcile"
	"github.com/listwatch/listwatch/snapshot"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

// wait bounds every wait for something the controller does on its own.
const wait = 10 * time.Second

// controller is a running controller of configmaps with a /metrics of
// its own, over a fake API server.
type controller struct {
	s       *watchtest.Server
	client  *httpwatch.Client
	cms     *listwatch.Informer
	runner  *reconcile.Runner
	metrics string // the URL of /metrics
	host    string // the API server's host:port

	entered, release chan struct{} // the slow key's reconcile began; may end
	ticking          chan struct{} // closed: the tick key stops asking again
	stop             func()        // ends Run and waits for it
	runErr           error
}

// newController serves configmaps fail (fails once), requeue (asks to be
// requeued once), ok (labelled by a patch), slow (held until released)
// and tick (asks again after 10 ms until ticking closes: the queue's
// goroutine wakes and reports unfinished work). Every reconcile reads its
// object from the server.
func newController(t *testing.T) *controller {
	s := watchtest.NewServer()
	t.Cleanup(s.Close)
	s.AddResource(watchtest.Leases, watchtest.Definition{})
	for _, n := range []string{"fail", "requeue", "ok", "slow", "tick"} {
		_, err := s.Create(watchtest.ConfigMaps, fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns"},"data":{"a":"1"}}`, n))
		require.NoError(t, err)
	}
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL, QPS: -1})
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)
	f := listwatch.NewFactory(client)
	f.Snapshot = snapshot.Options{Dir: t.TempDir()}
	c := &controller{s: s, client: client, cms: f.ForResource(watchtest.ConfigMaps),
		entered: make(chan struct{}), release: make(chan struct{}), ticking: make(chan struct{})}
	u, _ := url.Parse(s.URL)
	c.host = u.Host
	c.runner = reconcile.New(c.cms, c.reconcile)
	c.runner.Name, c.runner.Workers, c.runner.Factory = "cms", 2, f
	c.runner.Election = &leader.Config{Leases: client.Resource(watchtest.Leases).Namespace("ns"), Name: "lw-test", Identity: "me"}

	reg := prometheus.NewRegistry()
	require.NoError(t, Register(reg, Sources{Runners: []*reconcile.Runner{c.runner}}))
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	c.metrics = srv.URL + "/metrics"

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.runErr = c.runner.Run(ctx); close(done) }()
	var once sync.Once
	c.stop = func() {
		once.Do(func() {
			cancel()
			c.unblock()
			testwait.Recv(t, done, "Run to return")
		})
	}
	t.Cleanup(c.stop)
	return c
}

func (c *controller) unblock() {
	for _, ch := range []chan struct{}{c.release, c.ticking} {
		select {
		case <-ch:
		default:
			close(ch)
		}
	}
}

var calls sync.Map // key → calls so far, across the test's controllers

func (c *controller) reconcile(ctx context.Context, key string) (reconcile.Result, error) {
	n, _ := calls.LoadOrStore(c.metrics+key, new(int))
	count := n.(*int)
	*count++ // one key is never reconciled twice at once
	ns, name, _ := strings.Cut(key, "/")
	cms := c.client.Resource(watchtest.ConfigMaps).Namespace(ns)
	cm, err := cms.Get(ctx, name)
	if err != nil {
		return reconcile.Result{}, err
	}
	switch name {
	case "fail":
		if _, err := cms.Get(ctx, "missing"); *count == 1 {
			return reconcile.Result{}, err // a 404
		}
	case "requeue":
		return reconcile.Result{Requeue: *count == 1}, nil
	case "ok":
		if v, _ := cm.Label("checked"); v != "true" {
			_, err := cms.Patch(ctx, name, httpwatch.MergePatch, []byte(`{"metadata":{"labels":{"checked":"true"}}}`))
			return reconcile.Result{}, err
		}
	case "slow":
		if *count == 1 {
			close(c.entered)
			<-c.release
		}
	case "tick":
		select {
		case <-c.ticking:
		default:
			return reconcile.Result{RequeueAfter: 10 * time.Millisecond}, nil
		}
	}
	return reconcile.Result{}, nil
}
