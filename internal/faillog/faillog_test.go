package faillog

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/testkit/testlog"
)

func newTracker() (*Tracker, *testlog.Log, *clock.Fake) {
	logger, log := testlog.NewLogger()
	c := clock.NewFake(time.Unix(0, 0).UTC())
	return &Tracker{Logger: logger, Clock: c}, log, c
}

func failure(key string, level slog.Level) Failure {
	return Failure{Key: key, Level: level, Msg: "w: " + key + " failed; do this", Again: "w: " + key + " failed",
		Attrs: []any{"key", key}, Err: errors.New(key)}
}

func texts(log *testlog.Log, level slog.Level) []string {
	var out []string
	for _, l := range log.Lines(level) {
		out = append(out, l.String())
	}
	return out
}

// Decisions 20 and 25, the policy alone: each failure's first occurrence
// at its level, repeats at Debug and summarised at most every
// SummaryEvery with their count, one Info line at the recovery with the
// failures since the last one; a failure that flaps adds nothing, an old
// one is news again.
func TestTrackerSaysEachFailureOnce(t *testing.T) {
	tr, log, c := newTracker()
	tr.Recovered("w: works") // nothing failed: nothing to say
	tr.Failed(failure("503", slog.LevelWarn))
	tr.Failed(failure("403", slog.LevelError))
	for range 9 {
		c.Step(30 * time.Second)
		tr.Failed(failure("403", slog.LevelError))
	}
	c.Step(30 * time.Second) // 300 s after the 403's first line
	tr.Failed(failure("403", slog.LevelError))
	tr.Recovered("w: works", "who", "w")
	tr.Recovered("w: works", "who", "w")
	assert.Equal(t, []string{
		"WARN w: 503 failed; do this key=503",
		"ERROR w: 403 failed; do this key=403",
		"ERROR w: 403 failed 10 more times since 1970-01-01T00:00:00Z key=403 repeats=10 since=1970-01-01 00:00:00 +0000 UTC",
		"INFO w: works after 12 failures who=w failures=12 last_error=403",
	}, texts(log, slog.LevelInfo))
	assert.Len(t, log.Lines(slog.LevelDebug), 4+9, "each repeat at Debug")

	// The 503 is forgotten (its line is 300 s old), the 403 is not: it
	// flaps, and its next line waits for SummaryEvery.
	log.Reset()
	tr.Failed(failure("503", slog.LevelWarn))
	tr.Failed(failure("403", slog.LevelError))
	tr.Recovered("w: works")
	c.Step(SummaryEvery)
	tr.Failed(failure("403", slog.LevelError))
	tr.Recovered("w: works")
	assert.Equal(t, []string{
		"WARN w: 503 failed; do this key=503",
		"INFO w: works after 2 failures failures=2 last_error=403",
		"ERROR w: 403 failed 2 more times since 1970-01-01T00:05:00Z key=403 repeats=2 since=1970-01-01 00:05:00 +0000 UTC",
		"INFO w: works after 1 failure failures=1 last_error=403",
	}, texts(log, slog.LevelInfo))
}

// A server sending ever new errors cannot grow a Tracker without bound,
// and a Tracker may be used by many goroutines at once.
func TestTrackerIsBoundedAndConcurrent(t *testing.T) {
	tr, log, _ := newTracker()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 100 {
				tr.Failed(failure(fmt.Sprint(g*100+i), slog.LevelWarn))
			}
		})
	}
	wg.Wait()
	tr.mu.Lock()
	n := len(tr.runs)
	tr.mu.Unlock()
	assert.LessOrEqual(t, n, maxKeys)
	require.Len(t, log.Lines(slog.LevelWarn), 400, "each distinct failure is news")
	tr.Recovered("w: works")
	lines := log.Lines(slog.LevelInfo)
	require.Len(t, lines, 401, "the 400 failures, then the recovery")
	assert.Contains(t, lines[400].Text, "w: works after 400 failures")
}
