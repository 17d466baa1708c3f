package shard

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
)

// notifyingEvents is an events watcher that keeps what NotifyRead gave it.
type notifyingEvents struct {
	events
	notify func()
}

func (e *notifyingEvents) NotifyRead(fn func()) { e.notify = fn }

// decision 33, decision 20: Source says what the wrapped source says of
// itself (its resource names the informer and its failures), and its
// watcher passes NotifyRead on, so a sharded informer is woken once per
// read of the wrapped watch.
func TestSourcePassesCapabilitiesOn(t *testing.T) {
	m := &Member{cfg: Config{Identity: "a"}, view: []string{"a"}}
	in := &notifyingEvents{}
	src := m.Source(eventSource{w: in})
	assert.Equal(t, eventSource{}.Info(), src.Info())
	w, err := src.Watch(context.Background(), httpwatch.ListOptions{})
	require.NoError(t, err)
	read := 0
	w.NotifyRead(func() { read++ })
	require.NotNil(t, in.notify, "passed on")
	in.notify()
	assert.Equal(t, 1, read)
}
