package watchtest_test

import (
	"io"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/watchtest"
)

// A cut that falls exactly at the end of a frame drops the connection as
// soon as that frame is out, not at the next event: the client gets the
// whole frame, then an unexpected EOF, although nothing else happens.
func TestCutAtFrameEndDropsAtOnce(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Pods, podJSON("ns", "a", nil))
	s.CutNextWatchAfterBytes(frameLen(t, s))
	w := openWatch(t, s, watchPath("ns", url.Values{"resourceVersion": {"1"}, "timeoutSeconds": {"1"}}))
	assert.Equal(t, "ADDED a", w.next().Type+" a")
	assert.ErrorIs(t, w.end(), io.ErrUnexpectedEOF, "dropped after the frame, before the watch's timeout")
}

// A slowed watch calls pause between two pieces of a frame only: never
// after a frame's last piece, so a frame that fits in one piece is never
// paused.
func TestSlowWatchPausesOnlyBetweenPieces(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Pods, podJSON("ns", "a", nil))
	n := frameLen(t, s)
	for _, tc := range []struct {
		chunk, pauses int
	}{
		{n, 0},
		{n + 1, 0},
		{(n + 1) / 2, 1},
	} {
		var pauses atomic.Int32
		s.SlowWatches(tc.chunk, func() { pauses.Add(1) })
		// The cut ends the watch once its one frame is written, after any
		// pause the writer makes.
		s.CutNextWatchAfterEvents(1)
		resp, err := s.Client().Get(s.URL + watchPath("ns", url.Values{"resourceVersion": {"1"}}))
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
		assert.Len(t, b, n)
		assert.Equal(t, int32(tc.pauses), pauses.Load(), "a %d-byte frame in pieces of %d", n, tc.chunk)
	}
	s.SlowWatches(0, nil)
}
