package listwatch

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func podWithManagedFields(name string) string {
	return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns","managedFields":[{"manager":"kubectl","operation":"Apply"}]}}`, name)
}

// stamp is a transform that labels every object, and counts the objects it
// saw still carrying managedFields.
func stamp(withManagedFields *atomic.Int64) func(*Object) (*Object, error) {
	return func(o *Object) (*Object, error) {
		if o.Get("metadata.managedFields").Exists() {
			withManagedFields.Add(1)
		}
		return raw.NewObject(fmt.Appendf(nil,
			`{"metadata":{"name":%q,"namespace":%q,"resourceVersion":%q,"labels":{"stamped":"yes"}}}`,
			o.Name(), o.Namespace(), o.ResourceVersion()))
	}
}

// decision 5, conformance 76: through the Factory, managedFields are dropped
// by default and kept on request, and Factory.Transform rewrites every
// object, listed or watched, after managedFields are gone.
func TestFactoryManagedFieldsAndTransform(t *testing.T) {
	for _, watchList := range []bool{true, false} {
		for _, tc := range []struct {
			name      string
			keep      bool
			transform bool
		}{
			{name: "default"},
			{name: "keep", keep: true},
			{name: "transform", transform: true},
		} {
			t.Run(fmt.Sprintf("%s/watchList=%v", tc.name, watchList), func(t *testing.T) {
				s := watchtest.NewServer()
				defer s.Close()
				_, err := s.Create(watchtest.Pods, podWithManagedFields("listed"))
				require.NoError(t, err)
				client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
				require.NoError(t, err)
				defer client.CloseIdleConnections()

				f := NewFactory(client)
				f.KeepManagedFields = tc.keep
				var sawManagedFields atomic.Int64
				if tc.transform {
					f.Transform = stamp(&sawManagedFields)
				}
				f.Configure = func(_ httpwatch.Resource, inf *Informer) { inf.Reflector.PagedList = !watchList }
				pods := f.ForResource(podsRes)
				ctx, cancel := context.WithCancel(context.Background())
				defer func() { cancel(); f.Shutdown() }()
				f.Start(ctx)
				require.NoError(t, pods.Wait(ctx))
				wctx, wcancel := context.WithTimeout(ctx, wait)
				defer wcancel()
				require.NoError(t, s.WaitForWatches(wctx, 1))
				_, err = s.Create(watchtest.Pods, podWithManagedFields("watched"))
				require.NoError(t, err)
				require.Eventually(t, func() bool { return pods.Indexer().Len() == 2 }, wait, time.Millisecond)

				for _, name := range []string{"listed", "watched"} {
					o, err := pods.Lister().Get("ns", name)
					require.NoError(t, err)
					assert.Equal(t, tc.keep, o.Get("metadata.managedFields").Exists(), "%s: managedFields", name)
					stamped, _ := o.Label("stamped")
					assert.Equal(t, tc.transform, stamped == "yes", "%s: transformed", name)
				}
				assert.Zero(t, sawManagedFields.Load(), "the transform runs after managedFields are dropped")
			})
		}
	}
}

// conformance 77: after Shutdown, Start starts nothing, so Wait says at
// once that an informer made after Shutdown was never started
// (conformance 78), rather than wait for it.
func TestFactoryStartAfterShutdownStartsNothing(t *testing.T) {
	s := watchtest.NewServer()
	defer s.Close()
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	require.NoError(t, err)
	defer client.CloseIdleConnections()
	f := NewFactory(client)
	f.ForResource(podsRes)
	ctx, cancel := context.WithCancel(context.Background())
	f.Start(ctx)
	require.NoError(t, f.Wait(ctx))
	cancel()
	f.Shutdown()

	cms := f.ForResource(cmsRes)
	ctx2, cancel2 := context.WithTimeout(context.Background(), wait)
	defer func() { cancel2(); f.Shutdown() }()
	f.Start(ctx2)
	err = f.Wait(ctx2)
	require.ErrorIs(t, err, ErrNotStarted, "an informer made after Shutdown was started")
	assert.NoError(t, ctx2.Err(), "said at once, not at the deadline")
	assert.Contains(t, err.Error(), "configmaps.v1")
	assert.False(t, cms.HasSynced())
}
