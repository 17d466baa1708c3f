package reflector

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
)

// conformance 18: a Table (meta.k8s.io) in a watch is never an object of
// the resource: it is dropped and reported even with no ExpectedKind, while
// objects of any kind pass.
func TestReflectorDropsTablesWithoutExpectedKind(t *testing.T) {
	object := func(kind, apiVersion, name string) *raw.Object {
		o, err := raw.NewObject(fmt.Appendf(nil, `{"kind":%q,"apiVersion":%q,"metadata":{"name":%q,"namespace":"ns","resourceVersion":"7"}}`, kind, apiVersion, name))
		require.NoError(t, err)
		return o
	}
	w := newWatcher(
		ev(httpwatch.Added, object("Table", "meta.k8s.io/v1", "table")),
		ev(httpwatch.Added, object("Table", "example.com/v1", "mine")),
		ev(httpwatch.Added, object("ConfigMap", "v1", "cm")),
	)
	r, sink, _ := newTestReflector(&scriptSource{})
	var errs []error
	r.OnError = func(err error) { errs = append(errs, err) }
	s := started(streamOf(w, memory{}))
	for range 3 {
		s, _ = r.step(context.Background(), s)
		require.Equal(t, phaseStream, s.phase, "the watch goes on")
	}
	s.closeWatch()
	assert.Equal(t, []string{"add mine@7", "add cm@7"}, sink.log(), "a kind named Table of another group is an object")
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], ErrUnexpectedKind)
}

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
