package prommetrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/reconcile"
)

// Register reaches a runner's informers, For and Watches, skips a nil
// runner, and hooks a client it reaches twice (given, and a factory's)
// once: each request is counted once.
func TestRegisterReachesEachPartOnce(t *testing.T) {
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: "https://api.example:6443"})
	require.NoError(t, err)
	informer := func(resource string) *listwatch.Informer {
		inf := listwatch.NewInformer(client.Resource(httpwatch.Resource{Version: "v1", Resource: resource}), 0)
		inf.Reflector.Name = resource
		return inf
	}
	r := reconcile.New(informer("pods"), nil)
	r.Watches = []reconcile.Watch{{Informer: informer("configmaps")}}
	reg := prometheus.NewRegistry()
	require.NoError(t, Register(reg, Sources{Client: client, Factory: listwatch.NewFactory(client),
		Runners: []*reconcile.Runner{nil, r}}))
	client.Metrics(httpwatch.RequestInfo{Verb: "get", Code: 200})

	sc := gather(t, reg)
	assert.Equal(t, 1.0, sc.Value("rest_client_requests_total", map[string]string{"code": "200", "method": "GET", "host": "api.example:6443"}))
	for _, name := range []string{"pods", "configmaps"} {
		assert.Zero(t, sc.Value("listwatch_informer_objects", map[string]string{"informer": name}), name)
	}
}

// A Register that fails leaves nothing registered: the same parts can be
// registered again once what collided is gone.
func TestFailedRegisterRegistersNothing(t *testing.T) {
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: "https://api.example:6443"})
	require.NoError(t, err)
	inf := listwatch.NewInformer(client.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"}), 0)
	reg := prometheus.NewRegistry()
	require.NoError(t, Register(reg, Sources{Informers: []*listwatch.Informer{inf}}))
	// The client's series register, then the informers' collide.
	require.Error(t, Register(reg, Sources{Client: client, Informers: []*listwatch.Informer{inf}}))
	assert.NoError(t, Register(reg, Sources{Client: client}), "the failed call's client series were left registered")
}
