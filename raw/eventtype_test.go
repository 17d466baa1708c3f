package raw

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEventTypeCopiedWithoutDecoding: an event type without escapes is
// copied out as it is: framing an event allocates its type string and
// nothing else. A type with escapes is decoded.
func TestEventTypeCopiedWithoutDecoding(t *testing.T) {
	const events = 200
	er := (&Decoder{}).Events(strings.NewReader(strings.Repeat(podFrame+"\n", events+10)))
	_, err := er.Next() // the first read
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(events, func() {
		f, err := er.Next()
		if err != nil || f.Type != "ADDED" {
			t.Fatalf("frame %q: %v", f.Type, err)
		}
	})
	require.LessOrEqual(t, allocs, 1.0)

	f, err := (&Decoder{}).Events(strings.NewReader(`{"type":"MOD\u0049FIED","object":{}}`)).Next()
	require.NoError(t, err)
	require.Equal(t, "MODIFIED", f.Type)
}
