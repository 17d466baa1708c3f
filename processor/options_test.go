package processor_test

import (
	"context"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/processor"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A handler added before Run follows the clock Run finds: its first resync
// is one period after Run, on that clock. (An informer sets its processor's
// fields as it runs, after handlers may have joined.)
func TestHandlersAddedBeforeRunFollowRunsClock(t *testing.T) {
	p := processor.New[int]()
	added := make(chan int, 1)
	_, err := p.AddHandler(processor.HandlerFuncs[int]{AddFunc: func(n int, _ bool) { added <- n }}, time.Minute, nil)
	require.NoError(t, err)
	fake := clock.NewFake(time.Unix(0, 0))
	p.Clock = fake
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); testwait.Recv(t, done, "Run to return after cancel") }()
	p.Distribute(processor.Added(1, false))
	testwait.Recv(t, added, "the listener to run (Run has scheduled it)")
	assert.False(t, p.ShouldResync(), "not due at once")
	fake.Step(time.Minute)
	assert.True(t, p.ShouldResync(), "due one period after Run, on the clock Run found")
}
