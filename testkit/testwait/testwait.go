// Package testwait bounds the waits of tests, so that a broken behaviour
// fails in seconds with a message saying what never happened, instead of
// hanging until go test's timeout and printing only goroutine stacks.
//
//	go func() { done <- inf.Run(ctx) }()
//	cancel()
//	require.NoError(t, testwait.Recv(t, done, "Run to return after cancel"))
//
// Call these from the test's own goroutine (or a Cleanup): they stop the test
// with t.Fatalf.
package testwait

import (
	"context"
	"sync"
	"testing"
	"time"
)

// Timeout is how long a wait lasts before the test fails. It is generous:
// under -race on a loaded two-core machine a healthy wait takes milliseconds.
const Timeout = 10 * time.Second

// Recv returns the next value received from ch (the zero value once ch is
// closed), failing t if nothing comes within Timeout. what names the event
// awaited, e.g. "Run to return".
func Recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	return RecvWithin(t, ch, Timeout, what)
}

// RecvWithin is Recv with its own bound, for waits on a real server.
func RecvWithin[T any](t testing.TB, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("waited %v for %s", d, what)
		panic("unreachable")
	}
}

// Group waits for wg, failing t if it is not done within Timeout.
func Group(t testing.TB, wg *sync.WaitGroup, what string) {
	t.Helper()
	GroupWithin(t, wg, Timeout, what)
}

// GroupWithin is Group with its own bound.
func GroupWithin(t testing.TB, wg *sync.WaitGroup, d time.Duration, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	RecvWithin(t, done, d, what)
}

// Context returns a context that ends after Timeout or when the test does,
// for blocking calls that take one (a watch's Next, a Get, Wait): a
// call that should have returned then fails the test with the context's
// error instead of hanging it.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	t.Cleanup(cancel)
	return ctx
}
