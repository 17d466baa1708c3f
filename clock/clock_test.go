package clock_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/require"
)

func TestFakeFiresInOrderOnlyWhenDue(t *testing.T) {
	c := clock.NewFake(time.Unix(0, 0))
	a, b := c.NewTimer(2*time.Second), c.NewTimer(time.Second)
	c.Step(time.Second)
	select {
	case <-b.C():
	default:
		t.Fatal("1s timer did not fire at 1s")
	}
	select {
	case <-a.C():
		t.Fatal("2s timer fired at 1s")
	default:
	}
	require.Equal(t, 1, c.Waiters())
	require.True(t, a.Stop())
	c.Step(time.Hour)
	select {
	case <-a.C():
		t.Fatal("stopped timer fired")
	default:
	}
}

func TestFakeResetAndZeroDelay(t *testing.T) {
	c := clock.NewFake(time.Unix(0, 0))
	tm := c.NewTimer(0)
	testwait.Recv(t, tm.C(), "a zero-delay timer to fire at once")
	require.False(t, tm.Reset(time.Minute))
	require.True(t, tm.Reset(time.Second))
	c.Step(time.Second)
	got := testwait.Recv(t, tm.C(), "the reset timer to fire when stepped to its deadline")
	require.Equal(t, time.Unix(1, 0), got)
}

func TestWaitForWaiters(t *testing.T) {
	c := clock.NewFake(time.Unix(0, 0))
	done := make(chan struct{})
	go func() {
		defer close(done)
		tm := c.NewTimer(time.Second)
		select {
		case <-tm.C():
		case <-time.After(testwait.Timeout):
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, c.WaitForWaiters(ctx, 1))
	c.Step(time.Second)
	testwait.Recv(t, done, "the waiter's timer to fire when stepped")
}

func ExampleFake() {
	c := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t := c.NewTimer(90 * time.Second)
	c.Step(90 * time.Second)
	fmt.Println((<-t.C()).Format(time.TimeOnly))
	// Output: 00:01:30
}
