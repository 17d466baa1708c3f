package e2e

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/patch"
	"github.com/listwatch/listwatch/ratelimit"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/store"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// labeller is the configmap-labelling controller of the README: it checks
// every configmap and labels it checked=true with a merge patch, reporting
// the resourceVersion it checked in an annotation. The patch carries that
// resourceVersion, so a configmap changed after its check is a 409
// Conflict; the controller then reads the latest version from the server
// and checks again (RetryOnConflict). Failures go back to the queue with a
// backoff.
type labeller struct {
	cms    *httpwatch.ResourceClient
	lister *listwatch.Lister
	queue  *ratelimit.Queue[string]
	// check is the controller's judgement of a configmap.
	check     func(ctx context.Context, cm *raw.Object) error
	conflicts atomic.Int32
}

const checkedVersion = "labeller.example.com/checked-version"

func (l *labeller) enqueue(cm *listwatch.Object) { l.queue.Add(listwatch.Key(cm)) }

// work runs one worker until the queue shuts down.
func (l *labeller) work(ctx context.Context) {
	for {
		key, shutdown := l.queue.Get()
		if shutdown {
			return
		}
		if err := l.reconcile(ctx, key); err != nil {
			l.queue.AddRateLimited(key)
		} else {
			l.queue.Forget(key)
		}
		l.queue.Done(key)
	}
}

func (l *labeller) reconcile(ctx context.Context, key string) error {
	ns, name, err := store.SplitKey(key)
	if err != nil {
		return err
	}
	cm, err := l.lister.ByNamespace(ns).Get(name)
	if httpwatch.IsNotFound(err) {
		return nil // deleted since it was queued
	}
	if err != nil {
		return err
	}
	cms := l.cms.Namespace(ns)
	return httpwatch.RetryOnConflict(ctx, func(ctx context.Context) error {
		if v, _ := cm.Label("checked"); v == "true" {
			return nil
		}
		if err := l.check(ctx, cm); err != nil {
			return err
		}
		body, err := patch.Merge(cm, patch.ResourceVersion).Set("metadata.labels.checked", "true").
			Set(patch.Path("metadata", "annotations", checkedVersion), cm.ResourceVersion()).Bytes()
		if err != nil {
			return err
		}
		_, err = cms.Patch(ctx, name, httpwatch.MergePatch, body, httpwatch.WriteOptions{FieldManager: "labeller"})
		if httpwatch.IsConflict(err) {
			l.conflicts.Add(1)
			// The cache was behind the server: check the latest version.
			latest, getErr := cms.Get(ctx, name)
			if getErr != nil {
				return getErr
			}
			cm = latest
		}
		return err
	})
}

// The controller on the real server labels every configmap, the existing
// and the new; one changed by another writer while it was being checked is
// checked again at its new version.
func TestLabellingController(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := client(t)
	ns := namespace(t, c)
	cms := c.Resource(configMaps).Namespace(ns)
	for _, name := range []string{"a", "b", "busy"} {
		_, err := cms.Create(ctx, configMap(ns, name, "1"))
		require.NoError(t, err)
	}

	inf := listwatch.NewInformer(cms, 0)
	queue := ratelimit.NewQueue(ratelimit.Config[string]{Name: "labeller"})
	var raced atomic.Bool
	var racedVersion atomic.Value // the version the other writer made
	l := &labeller{cms: c.Resource(configMaps), lister: inf.Lister(), queue: queue,
		check: func(ctx context.Context, cm *raw.Object) error {
			if cm.Name() == "busy" && raced.CompareAndSwap(false, true) {
				// Another writer changes the configmap during the check.
				o, err := cms.Patch(ctx, "busy", httpwatch.MergePatch, []byte(`{"data":{"v":"2"}}`))
				if err == nil {
					racedVersion.Store(o.ResourceVersion())
				}
				return err
			}
			return nil
		}}
	_, err := inf.AddEventHandler(listwatch.HandlerFuncs{
		AddFunc:    func(cm *listwatch.Object, _ bool) { l.enqueue(cm) },
		UpdateFunc: func(_, cm *listwatch.Object) { l.enqueue(cm) },
	})
	require.NoError(t, err)
	run(t, inf)
	done := make(chan struct{})
	go func() { l.work(ctx); close(done) }()
	t.Cleanup(func() { queue.ShutDown(); testwait.RecvWithin(t, done, wait, "the worker to stop after ShutDown") })

	_, err = cms.Create(ctx, configMap(ns, "late", "1"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return len(names(t, cms, "checked=true")) == 4
	}, wait, 50*time.Millisecond, "labelled: %v", names(t, cms, "checked"))

	busy, err := cms.Get(ctx, "busy")
	require.NoError(t, err)
	assert.Equal(t, "2", busy.Get("data.v").String(), "the other writer's change stays")
	checked, _ := busy.Annotation(checkedVersion)
	assert.Equal(t, racedVersion.Load(), checked, "busy was checked again at the other writer's version")
	assert.Equal(t, int32(1), l.conflicts.Load(), "one conflict, on the version checked before the other write")
}
