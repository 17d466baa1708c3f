package httpwatch

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/listwatch/listwatch/testkit/apitest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Warning header is read as HTTP defines it (RFC 9111 section 5.5):
// warn-text is a quoted-string, where a backslash only quotes the next
// character, so no header can write a newline or a terminal escape into the
// log; a warning holding a control character, or not of that form, is
// dropped, as client-go drops it (decision 27).
func TestWarningHeaderParsing(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{`299 - "unknown field \"bogus\""`, []string{`unknown field "bogus"`}},
		{`299 - "a\nb\rc\x1b[31m"`, []string{`anbrcx1b[31m`}},
		{`299 - "ends with a backslash \\"`, []string{`ends with a backslash \`}},
		{`299 kube-apiserver:6443 "dated" "Wed, 21 Oct 2015 07:28:00 GMT"`, []string{"dated"}},
		{`299 - "one", 299 - "two, with a comma"`, []string{"one", "two, with a comma"}},
		{`299 - "héllo"`, []string{"héllo"}},
		{"299 - \"a real\nnewline\"", nil},
		{"299 - \"escape \x1b[2J\"", nil},
		{"299 - \"tab\\\tquoted\"", nil},
		{"299 - \"bad utf-8 \xff\"", nil},
		{`not the usual form`, nil},
		{`299 - unquoted`, nil},
		{`299 - "unterminated`, nil},
		{`29 - "short code"`, nil},
		{`299 "no agent"`, nil},
		{`299 - "trailing" junk`, nil},
		{`299 - "good", garbage`, []string{"good"}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			assert.Equal(t, tc.want, warningTexts(tc.in))
		})
	}
}

// The once-per-text memory of read warnings is bounded in entries and in
// bytes: a server sending a different long warning each time costs a
// fixed-size key per entry, not the text (decision 27).
func TestReadWarningDedupeIsBounded(t *testing.T) {
	var w warned
	long := strings.Repeat("w", 64<<10)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 3 * maxWarned {
		require.True(t, w.first("/api/v1/pods", fmt.Sprint(i, long)), i)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	assert.LessOrEqual(t, len(w.seen), maxWarned)
	// Remembering the texts themselves would keep 64 MB.
	assert.Less(t, int64(after.HeapAlloc)-int64(before.HeapAlloc), int64(4<<20))
	assert.False(t, w.first("/api/v1/pods", fmt.Sprint(3*maxWarned-1, long)), "the latest is remembered")
	assert.True(t, w.first("/api/v1/pods", fmt.Sprint(0, long)), "the oldest was forgotten")
	runtime.KeepAlive(&w)
}

// Logged warnings are the parsed text, cut when very long (decision 27).
func TestWarningLoggedCut(t *testing.T) {
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Warning", `299 - "`+strings.Repeat("x", 100<<10)+`"`)
		w.Header().Add("Warning", `299 - "forged\x1b[2J\nlevel=ERROR"`)
		fmt.Fprint(w, cmJSON)
	})
	c := newTestClient(t, srv.URL)
	var logged strings.Builder
	c.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	_, err := c.Resource(Resource{Version: "v1", Resource: "configmaps", Namespace: "ns1"}).Get(context.Background(), "cfg")
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(logged.String(), "server warning"), logged.String())
	assert.Less(t, logged.Len(), 8<<10)
	assert.Contains(t, logged.String(), "(102400 bytes)")
	assert.Contains(t, logged.String(), `warning="forgedx1b[2Jnlevel=ERROR"`)
}

// TestCutWarningAtARune: a warning of exactly the logged length is logged
// whole; a longer one is cut at the last rune that starts before the
// bound, never inside one, and one with no rune start at all is cut to
// nothing rather than read before its start.
func TestCutWarningAtARune(t *testing.T) {
	whole := strings.Repeat("x", maxWarningLog)
	assert.Equal(t, whole, cutWarning(whole))
	runes := "a" + strings.Repeat("é", maxWarningLog) // byte maxWarningLog is inside an é
	cut := cutWarning(runes)
	assert.True(t, strings.HasPrefix(cut, "a"+strings.Repeat("é", maxWarningLog/2-1)+"... ("), cut[:20])
	assert.NotContains(t, cut, "\uFFFD")
	noStart := strings.Repeat("\x80", maxWarningLog+1)
	assert.Equal(t, fmt.Sprintf("... (%d bytes)", maxWarningLog+1), cutWarning(noStart))
}

// TestReadWarningsForgetAtTheBound: distinct warnings are each logged
// once while fewer than maxWarned are remembered; the next one past the
// bound starts the memory again.
func TestReadWarningsForgetAtTheBound(t *testing.T) {
	var w warned
	require.True(t, w.first("/p", "a"))
	require.True(t, w.first("/p", "b"))
	require.False(t, w.first("/p", "a"), "a second warning does not forget the first")
	for i := range maxWarned - 2 {
		require.True(t, w.first("/p", fmt.Sprint(i)))
	}
	require.False(t, w.first("/p", "a"), "maxWarned remembered")
	require.True(t, w.first("/p", "one too many"))
	require.True(t, w.first("/p", "a"), "forgotten past the bound")
}

// A quoted string that ends in its escape character is not a string.
func TestQuotedStringEndingInABackslash(t *testing.T) {
	_, _, ok := quotedString(`"abc\`)
	assert.False(t, ok)
}
