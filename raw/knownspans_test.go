package raw

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The extents of containers a watch event's framing noted are offsets in
// the frame; building the event's object, which starts len(event) bytes
// into it, reads them as such. Each case puts a value that building reads
// (in metadata) 2*len(event) bytes past a noted container, where reading
// the offsets the wrong way round would take the value for that container.
// An escaped key makes the object be read member by member, which is where
// the extents are used.
func TestEventObjectUsesNotedExtentsAtTheirOffsets(t *testing.T) {
	const event = `{"type":"ADDED","object":`
	shift := 2 * len(event)
	for _, tc := range []struct {
		name string
		// The noted container starts at len(noted) in the object, the
		// value read at len(before+padding+after); rest ends the object.
		noted, before, after, rest string
	}{
		{
			name:   "a member of the object",
			noted:  `{"k\u0065y":0,"x":`,
			before: `{"k\u0065y":0,"x":{"p":"`,
			after:  `"},"metadata":{"name":`,
			rest:   `"a","uid":"u"}}`,
		},
		{
			name:   "an element of a member",
			noted:  `{"k\u0065y":0,"x":[`,
			before: `{"k\u0065y":0,"x":[{"p":"`,
			after:  `"},{"q":1}],"metadata":{"labels":`,
			rest:   `{"l":"v"},"name":"a"}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pad := len(tc.noted) + shift - len(tc.before) - len(tc.after)
			require.Positive(t, pad)
			obj := tc.before + strings.Repeat("x", pad) + tc.after + tc.rest
			want, err := NewObject([]byte(obj))
			require.NoError(t, err)

			f, err := (&Decoder{}).Events(strings.NewReader(event + obj + `}`)).Next()
			require.NoError(t, err)
			o, err := f.Object()
			require.NoError(t, err)
			assert.Equal(t, want.String(), o.String())
			assert.Equal(t, "a", o.Name())
			assert.Equal(t, want.Labels(), o.Labels())
		})
	}
}
