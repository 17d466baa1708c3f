package ratelimit

import "time"

// Metrics receives what a queue measures, as events, so that it can be backed
// by Prometheus, expvar or a log without this package importing any of them.
// Every call names the queue (Config.Name), so one Metrics can serve many
// queues, for example as labels of Prometheus vectors.
//
// The queue calls these methods while holding its lock, which keeps the
// events of one queue in order (the depth never reads below zero) but means
// they must be quick and must not call the queue. Embed NopMetrics to
// implement only some of them.
type Metrics interface {
	// Added: an item became waiting; the depth grows by one. Adding an item
	// that already waits is not counted.
	Added(queue string)
	// Started: Get handed out an item that had waited for d since it was
	// added; the depth shrinks by one.
	Started(queue string, d time.Duration)
	// Finished: Done was called for an item d after Get handed it out.
	Finished(queue string, d time.Duration)
	// Retried: AddAfter or AddRateLimited was called.
	Retried(queue string)
	// Unfinished reports the work in progress: the total time that items
	// now being processed have been held, and the longest of those times.
	// A gauge set here shows a stuck worker. The queue's goroutine reports
	// it each time it wakes, which is at least every 10 seconds.
	Unfinished(queue string, total, longest time.Duration)
}

// NopMetrics discards everything. It is the default: with it, the queue does
// not even read the clock for Add, Get or Done.
type NopMetrics struct{}

func (NopMetrics) Added(string)                                    {}
func (NopMetrics) Started(string, time.Duration)                   {}
func (NopMetrics) Finished(string, time.Duration)                  {}
func (NopMetrics) Retried(string)                                  {}
func (NopMetrics) Unfinished(string, time.Duration, time.Duration) {}
