package raw

import (
	"fmt"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// describeList is what a caller sees of a decoded list, or its error.
func describeList(p *List, err error) string {
	if err != nil {
		return "error"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "rv %q continue %q", p.ResourceVersion, p.Continue)
	if p.RemainingItemCount != nil {
		fmt.Fprintf(&b, " remaining %d", *p.RemainingItemCount)
	}
	for _, o := range p.Items {
		b.WriteString("\n" + o.String())
	}
	return b.String()
}

// TestListTopLevelScalarsSplitAnywhere: numbers and literals among a
// list's own members (unknown keys, "items": null) are read whole however
// the body's reads cut them, including right before the comma or brace
// that ends them, and a broken one is refused however it is cut. Each cut
// reads into a new buffer: one from the pool would hold the same body from
// the last try behind what was read, which hides a reader that looks past
// its end.
func TestListTopLevelScalarsSplitAnywhere(t *testing.T) {
	item := `{"metadata":{"name":"a","resourceVersion":"3"}}`
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{`{"kind":"PodList","count":12345,"ok":true,"no":false,"nil":null,"e":-1.5e+3,"z":0,` +
			`"metadata":{"resourceVersion":"7","remainingItemCount":2},"items":[` + item + `],"after":987}`, true},
		{`{"metadata":{"resourceVersion":"8"},"n":1,"items":null}`, true},
		{`{ "items" : null , "n" : 1 , "metadata" : { "continue" : "c" } , "t" : true }`, true},
		{`{"items":[` + item + `],"n":42}`, true},
		{`{"items":[],"x":tru,"metadata":{}}`, false},
		{`{"items":[],"x":1.,"metadata":{}}`, false},
		{`{"items":[],"x":nulll}`, false},
		{`{"items":nul}`, false},
		{`{"x":-,"items":[]}`, false},
	} {
		want := describeList((&Decoder{}).DecodeList(strings.NewReader(tc.body), 0))
		require.Equal(t, tc.ok, want != "error", "%s read whole: %s", tc.body, want)
		for at := 1; at < len(tc.body); at++ {
			drainFreeBufs()
			got := describeList((&Decoder{}).DecodeList(&chunkReader{chunks: splitAt([]byte(tc.body), at)}, 0))
			require.Equal(t, want, got, "%s cut at %d (%q|%q)", tc.body, at, tc.body[:at], tc.body[at:])
		}
		drainFreeBufs()
		got := describeList((&Decoder{}).DecodeList(iotest.OneByteReader(strings.NewReader(tc.body)), 0))
		require.Equal(t, want, got, "%s read a byte at a time", tc.body)
	}
}
