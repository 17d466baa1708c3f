package raw

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStreamErrorNamesTheOffendingByte: a watch event or list item that is
// not JSON is refused with the stream offset of the byte that breaks it,
// the same wherever the reads cut the stream: the backslash of a bad
// escape (a \u escape whose hex digits a read cut too), the separator
// after a closing bracket that may not follow it. The object's first
// member is a string of every length up to past a 64-byte block, so that
// the offending byte falls everywhere in the scanner's blocks.
func TestStreamErrorNamesTheOffendingByte(t *testing.T) {
	// @ marks the offending byte; PAD is the padding string.
	for _, tc := range []struct{ obj, msg string }{
		{`{"p":"PAD","metadata":{"name":"a"},"s":"@\x"}`, `invalid escape "\\x" in a string`},
		{`{"p":"PAD","metadata":{"name":"a"},"s":"ab@\u12x4"}`, `invalid \u escape in a string`},
		{`{"p":"PAD","metadata":{"name":"a"},"s":"@\uABCx"}`, `invalid \u escape in a string`},
		{`{"p":"PAD","metadata":{"name":"a"},"s":"@\u1"}`, `invalid \u escape in a string`},
		{`{"p":"PAD","metadata":{"name":"a"},"s":"@\ux"}`, `invalid \u escape in a string`},
		{`{"p":"PAD","metadata":{"name":"a"},"s":[1]@:2}`, `expected ',' or '}', found ':'`},
		{`{"p":"PAD","metadata":{"name":"a"},"s":[[1]@:2]}`, `expected ',' or ']', found ':'`},
		{`{"p":"PAD","metadata":{"name":"a"},"s":{"b":{"c":1}@:2}}`, `expected ',' or '}', found ':'`},
		{`{"p":"PAD","metadata":{"name":"a"}@:1}`, `expected ',' or '}', found ':'`},
	} {
		for _, pad := range []int{0, 1, 2, 5, 13, 30, 47, 62, 63, 64, 65} {
			obj := strings.Replace(tc.obj, "PAD", strings.Repeat("x", pad), 1)
			at := strings.IndexByte(obj, '@')
			obj = obj[:at] + obj[at+1:]
			require.False(t, json.Valid([]byte(obj)), obj)

			frame := []byte(`{"type":"ADDED","object":` + obj + "}\n")
			want := fmt.Sprintf("%s at byte %d", tc.msg, len(`{"type":"ADDED","object":`)+at)
			for cut := 0; cut <= len(frame); cut++ {
				_, err := newTestWatcher(&chunkReader{chunks: splitAt(bytes.Clone(frame), cut)}, &Decoder{}).Next()
				require.ErrorIs(t, err, errInvalidJSON, "%s cut at %d", frame, cut)
				require.ErrorContains(t, err, want, "%s cut at %d", frame, cut)
			}

			list := []byte(`{"items":[` + obj + `]}`)
			want = fmt.Sprintf("%s at byte %d", tc.msg, len(`{"items":[`)+at)
			for cut := 0; cut <= len(list); cut++ {
				_, err := (&Decoder{}).DecodeList(&chunkReader{chunks: splitAt(bytes.Clone(list), cut)}, 0)
				require.ErrorIs(t, err, errInvalidJSON, "%s cut at %d", list, cut)
				require.ErrorContains(t, err, want, "%s cut at %d", list, cut)
			}
		}
	}
}
