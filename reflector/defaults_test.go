package reflector

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Reflector built by hand, with no Clock, Logger or Random, runs on the
// defaults New would set, as an Informer or a Processor does: nil means the
// default everywhere. The watch's timeout draws a random number, its start
// reads the clock, and the dropped event of another kind is logged.
func TestReflectorNilMeansDefault(t *testing.T) {
	other, err := raw.NewObject(fmt.Appendf(nil, `{"kind":"ConfigMap","metadata":{"name":"x","namespace":"ns","resourceVersion":"11"}}`))
	require.NoError(t, err)
	w := newWatcher(ev(httpwatch.Added, other), ev(httpwatch.Added, obj("c", "12")))
	src := &scriptSource{
		pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", "", obj("a", "10"))},
		watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){watchOf(w)},
	}
	sink := &recordSink{}
	r := &Reflector{Source: src, Sink: sink, Options: DefaultOptions(), ResyncPeriod: time.Hour}
	r.WatchList = false
	r.ExpectedKind = "Pod"
	ctx, cancel := context.WithCancel(context.Background())
	done := runCatching(ctx, r)
	require.Eventually(t, func() bool { return len(sink.log()) == 2 }, 10*time.Second, time.Millisecond)
	cancel()
	assert.Nil(t, waitFor(t, done, "Run to return"), "Run panicked")
	assert.Equal(t, []string{"replace 1@10", "add c@12"}, sink.log())
	assert.EqualValues(t, 1, r.Stats().Errors, "the event of another kind is reported")
	assert.Nil(t, r.Clock, "the defaults are not written into the configuration")
}
