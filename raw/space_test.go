package raw

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// JSON's whitespace is space, tab, newline and carriage return, nothing
// else: a form feed or a vertical tab between tokens is an error, as
// encoding/json says, wherever in a 64-byte block it falls, whether the
// scanner is fed the value whole or a byte at a time, and whether it is a
// watch event's object, a list item or the gap between two events.
// Decision 35 (the framer checks encoding/json's grammar).
func TestFramerWhitespaceIsJSONs(t *testing.T) {
	for _, sp := range []string{" ", "\t", "\n", "\r", "\f", "\v", "\x00", "\x1f"} {
		for k := 0; k < 140; k++ {
			// The byte falls k bytes in: before a string, after one, in an
			// empty array, after a number, a literal and a bracket.
			obj := `{"a":` + strings.Repeat(" ", k) + sp + `"x"` + sp + `,"b":[` + sp + `]`
			switch k % 3 {
			case 0:
				obj += `,"c":1` + sp + `}`
			case 1:
				obj += `,"c":true` + sp + `}`
			case 2:
				obj += `,"c":{}` + sp + `}`
			}
			want := json.Valid([]byte(obj))
			require.Equal(t, isSpace(sp[0]), want, "%q", sp)
			for _, sizes := range [][]int{{len(obj)}, {1}, {7, 64}} {
				require.Equal(t, want, frameVerdict([]byte(obj), sizes), "%q at %d in pieces of %v", sp, k, sizes)
			}
			frame := `{"type":"ADDED","object":` + obj + "}\n"
			out, err := frames(t, [][]byte{[]byte(frame)})
			assert.Equal(t, want, len(out) == 1 && err == io.EOF, "watch event with %q at %d: %v", sp, k, err)
			list := `{"items":[` + obj + `]}`
			_, err = listItems([][]byte{[]byte(list)}, false)
			assert.Equal(t, want, err == nil, "list item with %q at %d: %v", sp, k, err)
		}
	}
}

// Between two watch events only JSON's whitespace may come: a form feed
// there is an error, as encoding/json's Decoder says, not a separator.
func TestFramerRejectsFormFeedBetweenEvents(t *testing.T) {
	for _, sep := range []string{"\n", "\r\n", " \t", "\f", "\n\f", "\v"} {
		body := podFrame + sep + podFrame + "\n"
		dec := json.NewDecoder(strings.NewReader(body))
		var v any
		require.NoError(t, dec.Decode(&v))
		want := dec.Decode(&v) == nil
		out, err := frames(t, [][]byte{[]byte(body)})
		if want {
			assert.Len(t, out, 2, "%q", sep)
			assert.ErrorIs(t, err, io.EOF, "%q", sep)
			continue
		}
		assert.Len(t, out, 1, "%q: the event before it is framed", sep)
		assert.False(t, err == nil || errors.Is(err, io.EOF), "%q taken as whitespace", sep)
	}
}
