package reflector

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/listwatch/listwatch/httpwatch"
)

// conformance 8: the backoff's knobs at their edges. A negative ResetAfter never
// starts over, and exactly ResetAfter after the sequence started is not yet
// over it; a negative Cap lets the delay grow without bound; Jitter stretches a
// delay by random·Jitter of it.
func TestBackoffEdges(t *testing.T) {
	t0 := time.Unix(0, 0)
	s := time.Second

	noReset := Backoff{Initial: s, ResetAfter: -1}
	assert.Equal(t, s, noReset.Next(t0, 0))
	assert.Equal(t, 2*s, noReset.Next(t0.Add(time.Hour), 0), "ResetAfter negative: no reset")

	b := DefaultBackoff()
	assert.Equal(t, 800*time.Millisecond, b.Next(t0, 0))
	assert.Equal(t, 1600*time.Millisecond, b.Next(t0.Add(2*time.Minute), 0), "exactly ResetAfter: not yet")
	assert.Equal(t, 800*time.Millisecond, b.Next(t0.Add(2*time.Minute+time.Nanosecond), 0), "past it: over")

	uncapped := Backoff{Initial: s, Cap: -1}
	var got []time.Duration
	for range 8 {
		got = append(got, uncapped.Next(t0, 0))
	}
	assert.Equal(t, []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, 64 * s, 128 * s}, got, "Cap negative: no cap")

	half := Backoff{Initial: s, Jitter: 0.5}
	assert.Equal(t, 1250*time.Millisecond, half.Next(t0, 0.5))
}

// An Op out of range names itself by number.
func TestOpString(t *testing.T) {
	assert.Equal(t, "list", OpList.String())
	assert.Equal(t, "resync", OpResync.String())
	assert.Equal(t, "Op(0)", Op(0).String())
	assert.Equal(t, fmt.Sprintf("Op(%d)", int(OpResync)+1), (OpResync + 1).String())
}

// A Retry-After is capped at 30 s when the backoff has no cap of its own.
func TestRetryAfterCapWithoutBackoffCap(t *testing.T) {
	src := &scriptSource{watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){watchFail(throttled(t, "WATCH", "86400"))}}
	r, _, _ := newTestReflector(src)
	r.Backoff = Backoff{Initial: -1}
	_, wait := r.step(context.Background(), at(phaseWatch, synced("5")))
	assert.Equal(t, defaultMaxRetryAfter, wait)
}
