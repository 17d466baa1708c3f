package watchtest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/watchtest"
)

// A WatchBuffer left at 0 means DefaultWatchBuffer, not a watch that is
// ended as soon as one event waits for a slow client.
func TestZeroWatchBufferMeansDefault(t *testing.T) {
	s := watchtest.NewUnstartedServer()
	s.WatchBuffer = 0
	s.Start()
	defer s.Close()
	require.Equal(t, watchtest.DefaultWatchBuffer, s.WatchBuffer)

	w, unstick := stuckWatch(t, s)
	assert.Equal(t, 1, s.OpenWatches(), "nine events wait in the buffer")
	unstick()
	for i, e := range w.nextN(10) {
		assert.Equal(t, fmt.Sprintf("ADDED p%d", i), e.Type+" "+e.get("metadata.name"))
	}
}

// With BookmarkInterval 0 a watch that allows bookmarks gets one only when
// SendBookmarks is called. (A fake clock fires a timer of 0 at once, so a
// periodic loop run with interval 0 would send them without pause.)
func TestZeroBookmarkIntervalSendsBookmarksOnlyOnRequest(t *testing.T) {
	s := watchtest.NewUnstartedServer()
	s.Clock = clock.NewFake(time.Unix(0, 0))
	s.BookmarkInterval = 0
	s.Start()
	defer s.Close()
	w := openWatch(t, s, watchPath("ns", url.Values{"resourceVersion": {s.ResourceVersion()}, "allowWatchBookmarks": {"true"}}))
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	require.NoError(t, s.WaitForWatches(ctx, 1))

	// A hundred creates over HTTP take long enough for bookmarks sent
	// unasked to show among the events.
	const n = 100
	var last []byte
	for i := range n {
		code, body := send(t, s, http.MethodPost, podsPath("ns", ""), "application/json", podJSON("ns", fmt.Sprintf("p%d", i), nil))
		require.Equal(t, http.StatusCreated, code, "%s", body)
		last = body
	}
	s.SendBookmarks()
	got := w.nextN(n + 1)
	var types []string
	for _, e := range got {
		types = append(types, e.Type)
	}
	assert.Equal(t, append(slices.Repeat([]string{"ADDED"}, n), "BOOKMARK"), types)
	assert.Equal(t, rvOf(gjson.ParseBytes(last)), got[n].get("metadata.resourceVersion"))
}

// Compact takes any non-negative resourceVersion; 0 forgets nothing.
func TestCompactAcceptsZero(t *testing.T) {
	s := newServer(t)
	o := mustCreate(t, s, watchtest.Pods, podJSON("ns", "a", nil))
	require.NoError(t, s.Compact("0"))
	w := openWatch(t, s, watchPath("ns", url.Values{"resourceVersion": {"1"}}))
	assert.Equal(t, "ADDED a "+rvOf(o), w.next().String(), "history from before the first write is kept")
	assert.EqualError(t, s.Compact("-1"), `watchtest: compact: resourceVersion "-1" is not a non-negative integer`)
}
