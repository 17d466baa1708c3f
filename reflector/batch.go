package reflector

import "github.com/listwatch/listwatch/httpwatch"

// A BatchSink is a Sink that can take a run of events as one batch: after
// Hold, its writes need not reach its consumer until Release, so that a
// burst of events wakes the consumer once rather than once per event.
// *delta.FIFO satisfies it.
//
// The reflector holds a BatchSink while it hands over the events of one
// read of the stream, and releases it before the watch reads again, before
// it waits for the stream and when the watch ends: the consumer never waits
// for an event the reflector has delivered. It does so only for watchers
// that say when they read (*httpwatch.ResourceClient's do).
type BatchSink interface {
	Sink
	Hold()
	Release()
}

// readNotifier is a Watcher that calls f, on the goroutine calling Next,
// each time Next is about to read more of the stream: the events returned
// so far are all it has.
type readNotifier interface {
	BeforeRead(f func())
}

// batcher holds a BatchSink while the events of one read go in. Only the
// goroutine that writes to the sink touches it.
type batcher struct {
	sink   BatchSink // nil: no batching
	notify readNotifier
	held   bool
}

func newBatcher(sink Sink, w httpwatch.Watcher) batcher {
	bs, ok := sink.(BatchSink)
	rn, ok2 := w.(readNotifier)
	if !ok || !ok2 {
		return batcher{}
	}
	return batcher{sink: bs, notify: rn}
}

func (b *batcher) hold() {
	if b.sink != nil && !b.held {
		b.sink.Hold()
		b.held = true
	}
}

func (b *batcher) release() {
	if b.held {
		b.held = false
		b.sink.Release()
	}
}
