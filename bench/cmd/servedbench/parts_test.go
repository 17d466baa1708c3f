package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// decodeEvents hands on each event's metadata version, skips bookmarks,
// and reads lines longer than its buffer whole.
func TestDecodeEventsFindsEachVersion(t *testing.T) {
	long := strings.Repeat("x", 100<<10)
	stream := `{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"7"},"spec":{}}}` + "\n" +
		`{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"8"}}}` + "\n" +
		`{"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"9","annotations":{"n":"` + long + `"}}}}` + "\n" +
		`{"type":"DELETED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"10"}}}` + "\n"
	var got []string
	decodeEvents(strings.NewReader(stream), func(rv string, _ time.Time) { got = append(got, rv) })
	require.Equal(t, []string{"7", "9", "10"}, got)
}
