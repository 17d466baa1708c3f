// Package clock lets every timed behaviour in listwatch (backoff, resync,
// delayed requeues) take time as a parameter, so tests step a Fake instead of
// sleeping.
//
//	c := clock.NewFake(time.Unix(0, 0))
//	t := c.NewTimer(time.Second)
//	c.Step(time.Second) // t.C() fires now, without waiting
package clock

import "time"

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	Since(t time.Time) time.Duration
	NewTimer(d time.Duration) Timer
}

// Timer is the part of *time.Timer listwatch uses, as an interface so a Fake
// can stand in for it.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
	Reset(d time.Duration) bool
}

// Real is the wall clock.
var Real Clock = realClock{}

type realClock struct{}

func (realClock) Now() time.Time                  { return time.Now() }
func (realClock) Since(t time.Time) time.Duration { return time.Since(t) }
func (realClock) NewTimer(d time.Duration) Timer  { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }
