package reflector

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// conformance 23: an InternalError exactly MaxInternalErrorRetryDuration
// after the first of its run is still retried at once; one later relists.
func TestReflectorInternalErrorWindowIsInclusive(t *testing.T) {
	r, _, c := newTestReflector(&scriptSource{})
	r.MaxInternalErrorRetryDuration = 30 * time.Second
	m := memory{lastRV: "5", cycled: true}
	for i, st := range []struct {
		after time.Duration
		want  phase
	}{
		{0, phaseWatch},
		{30 * time.Second, phaseWatch}, // exactly the window
		{time.Nanosecond, phaseStart},
	} {
		c.Step(st.after)
		from := started(streamOf(newWatcher(errEv(errInternal)), m))
		from.events = 1
		next, _ := r.step(context.Background(), from)
		require.Equal(t, st.want, next.phase, "step %d", i)
		m = next.memory
	}
}
