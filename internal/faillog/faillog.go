// Package faillog is the one policy by which listwatch logs a failure that
// its caller keeps retrying (decisions 20 and 25): say each failure once,
// count its repeats, say the recovery.
//
//   - The first occurrence of a failure (its Key) is one line at its Level:
//     Warn, or Error with what to do when retrying cannot cure it.
//   - Repeats are counted, logged at Debug, and summarised in one line at
//     most every SummaryEvery ("... failed 37 more times since ...",
//     attributes repeats and since), never one line per retry.
//   - The first success after a line above Debug is one line at Info,
//     with the count of failures since the last such line and the last
//     error (attributes failures and last_error). A failure that flaps
//     within SummaryEvery of its last line adds no line; one older than
//     that is forgotten at the recovery, so its next occurrence is news.
//
// Each caller keeps only its classification: what makes two failures the
// same, how bad one is and what to do about it.
//
//	var t faillog.Tracker // Logger and Clock set
//	t.Failed(faillog.Failure{Key: "403", Level: slog.LevelError, Msg: "list failed", Again: "list failed", Err: err})
//	t.Recovered("recovered")
package faillog

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/listwatch/listwatch/clock"
)

// SummaryEvery is the shortest time between two lines about one failure:
// with a backoff capped at 30 s, about ten retries.
const SummaryEvery = 5 * time.Minute

// maxKeys bounds the failures remembered at once: a server sending ever
// new codes cannot grow a Tracker.
const maxKeys = 32

// Failure is one occurrence of a failure, as its caller classified it.
type Failure struct {
	// Key makes two occurrences the same failure: an operation and the
	// class of its error, say.
	Key string
	// Level is that of the failure's lines: Warn, or Error when retrying
	// cannot cure it.
	Level slog.Level
	// Msg is the first line: what failed and, at Error, what to do.
	Msg string
	// Again is the subject of the later lines: "<Again> again" at Debug,
	// "<Again> 37 more times since <time>" in a summary.
	Again string
	// Attrs are added to every line about this occurrence.
	Attrs []any
	// Err is the occurrence, named by the recovery line.
	Err error
}

// Tracker logs failures and recoveries by the package's policy. Set Logger
// and Clock before the first call. A Tracker is safe for concurrent use.
type Tracker struct {
	Logger *slog.Logger
	Clock  clock.Clock

	mu   sync.Mutex
	runs map[string]*run
	// logged says a line above Debug was written since the last recovery
	// line, which makes the next recovery worth a line.
	logged   bool
	failures int   // since the last recovery line
	last     error // the latest occurrence
}

// run is one failure's history since its last line above Debug.
type run struct {
	level    slog.Level
	lastLine time.Time
	repeats  int // occurrences logged at Debug since lastLine
}

// Failed logs f as the policy says: its first occurrence at f.Level, a
// repeat at Debug, or a summary of the repeats when SummaryEvery has
// passed since the failure's last line.
func (t *Tracker) Failed(f Failure) {
	now := t.Clock.Now()
	level, msg, attrs := t.note(f, now)
	t.Logger.Log(context.Background(), level, msg, attrs...)
}

// note records f and returns the line it deserves.
func (t *Tracker) note(f Failure, now time.Time) (slog.Level, string, []any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failures++
	t.last = f.Err
	r, seen := t.runs[f.Key]
	switch {
	case !seen:
		if t.runs == nil {
			t.runs = map[string]*run{}
		}
		if len(t.runs) >= maxKeys {
			t.forgetOldest()
		}
		t.runs[f.Key] = &run{level: f.Level, lastLine: now}
		t.logged = true
		return f.Level, f.Msg, f.Attrs
	case now.Sub(r.lastLine) < SummaryEvery:
		r.repeats++
		return slog.LevelDebug, f.Again + " again", f.Attrs
	}
	n, since := r.repeats+1, r.lastLine
	r.repeats, r.lastLine = 0, now
	t.logged = true
	msg := fmt.Sprintf("%s %d more times since %s", f.Again, n, since.Format(time.RFC3339))
	return r.level, msg, append(append([]any(nil), f.Attrs...), "repeats", n, "since", since)
}

// Recovered notes that the work succeeds again. After a line above Debug
// it logs "<msg> after N failures" once at Info, with attrs; failures
// whose last line is SummaryEvery old are forgotten, while one that
// flaps sooner stays counted.
func (t *Tracker) Recovered(msg string, attrs ...any) {
	t.mu.Lock()
	if len(t.runs) == 0 {
		t.mu.Unlock()
		return
	}
	now := t.Clock.Now()
	logged, n, last := t.logged, t.failures, t.last
	if logged {
		t.logged, t.failures = false, 0
	}
	for k, r := range t.runs {
		if now.Sub(r.lastLine) >= SummaryEvery {
			delete(t.runs, k)
		}
	}
	t.mu.Unlock()
	if !logged {
		return
	}
	plural := "s"
	if n == 1 {
		plural = ""
	}
	attrs = append(append([]any(nil), attrs...), "failures", n, "last_error", last)
	t.Logger.Info(fmt.Sprintf("%s after %d failure%s", msg, n, plural), attrs...)
}

func (t *Tracker) forgetOldest() {
	var oldest string
	var at time.Time
	for k, r := range t.runs {
		if at.IsZero() || r.lastLine.Before(at) {
			oldest, at = k, r.lastLine
		}
	}
	delete(t.runs, oldest)
}
