package reconcile_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/reconcile"
	"github.com/listwatch/listwatch/watchtest"
)

// scripted answers the reconciles of ns/a in turn from answers, then with
// success; other keys succeed.
func scripted(answers ...func() (reconcile.Result, error)) func(context.Context, string) (reconcile.Result, error) {
	var n atomic.Int32
	return func(_ context.Context, key string) (reconcile.Result, error) {
		if key != "ns/a" {
			return reconcile.Result{}, nil
		}
		if i := int(n.Add(1)) - 1; i < len(answers) {
			return answers[i]()
		}
		return reconcile.Result{}, nil
	}
}

func fail() (reconcile.Result, error)    { return reconcile.Result{}, errors.New("refused") }
func requeue() (reconcile.Result, error) { return reconcile.Result{Requeue: true}, nil }
func succeed() (reconcile.Result, error) { return reconcile.Result{}, nil }

// expectAfter checks that ns/a is not reconciled before delay has passed
// since the last reconcile ended, and is once it has.
func expectAfter(t *testing.T, f *fixture, rec *recorder, obs *observer, ended *int, delay time.Duration) {
	t.Helper()
	f.step(delay - time.Millisecond)
	rec.none(t)
	f.step(time.Millisecond)
	assert.Equal(t, "ns/a", rec.next(t).key, "reconciled again after %v", delay)
	*ended++
	obs.waitFor(t, *ended)
}

// Result{Requeue: true} reconciles the key again after the limiter's
// backoff, which grows as an error's would, and is observed as Requeue,
// not Error. Decision 29.
func TestRequeueResultBacksOff(t *testing.T) {
	f := newFixture(t)
	f.create(watchtest.ConfigMaps, "ns", "a", "")
	rec := newRecorder()
	rec.answer = scripted(requeue, requeue)
	r := f.runner(f.informer(watchtest.ConfigMaps), rec)
	obs := observe(r)
	start(t, r)
	assert.Equal(t, "ns/a", rec.next(t).key)
	ended := 1
	obs.waitFor(t, ended)
	expectAfter(t, f, rec, obs, &ended, time.Second)
	expectAfter(t, f, rec, obs, &ended, 2*time.Second)
	f.step(time.Hour)
	rec.none(t)
	assert.Equal(t, []reconcile.Outcome{reconcile.Requeue, reconcile.Requeue, reconcile.Success}, obs.get())
}

// A success, and a RequeueAfter, forget the key's earlier failures: its
// next failure is retried after the limiter's base delay again, not after
// the backoff the earlier ones had grown. Decision 29.
func TestSuccessAndRequeueAfterForgetFailures(t *testing.T) {
	for name, forget := range map[string]func() (reconcile.Result, error){
		"success":      succeed,
		"requeueAfter": func() (reconcile.Result, error) { return reconcile.Result{RequeueAfter: time.Minute}, nil },
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			f.create(watchtest.ConfigMaps, "ns", "a", "")
			rec := newRecorder()
			rec.answer = scripted(fail, fail, fail, forget, fail)
			r := f.runner(f.informer(watchtest.ConfigMaps), rec)
			obs := observe(r)
			start(t, r)
			assert.Equal(t, "ns/a", rec.next(t).key)
			ended := 1
			obs.waitFor(t, ended)
			expectAfter(t, f, rec, obs, &ended, time.Second)
			expectAfter(t, f, rec, obs, &ended, 2*time.Second)
			expectAfter(t, f, rec, obs, &ended, 4*time.Second) // forgets
			if name == "success" {
				f.update(watchtest.ConfigMaps, "ns", "a", `,"labels":{"v":"2"}`)
				assert.Equal(t, "ns/a", rec.next(t).key, "a change is reconciled at once")
				ended++
				obs.waitFor(t, ended)
			} else {
				expectAfter(t, f, rec, obs, &ended, time.Minute)
			}
			// The failure just now is the first since the forgetting.
			expectAfter(t, f, rec, obs, &ended, time.Second)
			f.step(time.Hour)
			rec.none(t)
		})
	}
}

// An informer's resync reconciles every cached key again, though none
// changed: that is what a resync period is for. Decision 29.
func TestInformerResyncReconcilesUnchangedKeys(t *testing.T) {
	const period = time.Minute
	f := newFixture(t)
	f.create(watchtest.ConfigMaps, "ns", "a", "")
	f.create(watchtest.ConfigMaps, "ns", "b", "")
	inf := listwatch.NewInformer(f.client.Resource(watchtest.ConfigMaps), period)
	infClock := clock.NewFake(time.Unix(0, 0))
	inf.Clock = infClock
	rec := newRecorder()
	r := f.runner(inf, rec)
	start(t, r)
	assert.ElementsMatch(t, []string{"ns/a", "ns/b"}, []string{rec.next(t).key, rec.next(t).key})
	rec.none(t)

	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, infClock.WaitForWaiters(ctx, 1), "no resync timer armed")
	infClock.Step(period)
	assert.ElementsMatch(t, []string{"ns/a", "ns/b"}, []string{rec.next(t).key, rec.next(t).key},
		"a resync reconciles unchanged keys")
}
