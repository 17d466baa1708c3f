package raw

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNotesSpareTheBuildASecondScan: framing an event or a list item notes
// what building its object would otherwise scan again, and the build takes
// it from there: the object's top level and metadata (readTop reads the
// notes, not the bytes), the extents of the containers among the object's
// members and theirs (which a projection and a walk skip without a scan),
// and, in an event, the object itself (which walk jumps over when the
// notes are incomplete). Nothing but CPU shows whether they are used (the
// notes read the same as the walk, TestMemberNotesAgree), hence a test of
// the notes themselves, as TestMemberNotesUsed: without the top's notes
// BenchmarkWatchDecode took 1.8 times as long.
func TestNotesSpareTheBuildASecondScan(t *testing.T) {
	const obj = `{"kind":"Pod","metadata":{"name":"a","labels":{"x":"y"}},"spec":{"c":[{"n":1}],"s":"}"},"n":1}`
	span := func(in, sub string) valueRange {
		at := strings.Index(in, sub)
		require.GreaterOrEqual(t, at, 0, sub)
		return valueRange{at, at + len(sub)}
	}

	t.Run("event", func(t *testing.T) {
		frame := `{"type":"ADDED","object":` + obj + `}`
		er := (&Decoder{}).Events(strings.NewReader(frame + "\n"))
		f, err := er.Next()
		require.NoError(t, err)
		require.Equal(t, obj, string(f.src))

		_, ok := f.known.topLevel(f.src, false)
		require.True(t, ok, "the object's top was left to a walk")
		require.Equal(t, []valueRange{span(frame, `{"name":"a","labels":{"x":"y"}}`), span(frame, `{"c":[{"n":1}],"s":"}"}`)},
			f.known.spans, "the object's members")
		require.Equal(t, []valueRange{span(frame, `{"x":"y"}`), span(frame, `[{"n":1}]`)},
			f.known.deep, "their members")
		require.Equal(t, span(frame, obj), er.rd.sc.child, "the event's object")
	})

	t.Run("list item", func(t *testing.T) {
		rd := newReader(strings.NewReader(obj), 0, false)
		rd.sc.spans = &spanNotes{level: 2}
		v, err := rd.container()
		require.NoError(t, err)
		known := rd.sc.spans.noted()

		_, ok := known.topLevel(v, false)
		require.True(t, ok, "the item's top was left to a walk")
		require.Equal(t, []valueRange{span(obj, `{"name":"a","labels":{"x":"y"}}`), span(obj, `{"c":[{"n":1}],"s":"}"}`)},
			known.spans, "the item's members")
		require.Equal(t, []valueRange{span(obj, `{"x":"y"}`), span(obj, `[{"n":1}]`)},
			known.deep, "their members")
	})
}
