package raw

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// invalidShapes are objects whose brackets balance and whose strings close,
// so that a scanner counting brackets takes them whole, but which are not
// JSON: each breaks the grammar once, inside spec.
var invalidShapes = []struct{ name, spec string }{
	{"missing colon", `{"a" 1}`},
	{"bad literal tru", `{"a":tru}`},
	{"bad literal nul", `{"a":nul}`},
	{"bad literal fals", `{"a":fals}`},
	{"trailing comma in object", `{"a":1,}`},
	{"trailing comma in array", `[1,]`},
	{"leading zero", `{"a":01}`},
	{"no digit after point", `{"a":1.}`},
	{"lone minus", `{"a":-}`},
	{"no exponent digit", `{"a":1e}`},
	{"bad escape", `{"a":"\x"}`},
	{"short unicode escape", `{"a":"\u12"}`},
	{"control character in a string", "{\"a\":\"x\x01y\"}"},
	{"tab in a string", "{\"a\":\"x\ty\"}"},
	{"garbage between members", `{"a":1 x "b":2}`},
	{"no comma between members", `{"a":1 "b":2}`},
	{"two values in an array", `[1 2]`},
	{"key not a string", `{a:1}`},
	{"colon in an array", `[1:2]`},
	{"empty value", `{"a":}`},
	{"leading comma", `[,1]`},
	{"control character between members", "{\"a\":1,\x01\"b\":2}"},
	{"backslash outside a string", `{"a":\"b"}`},
	{"mismatched bracket deep", `{"a":{"b":{"c":[}]}}}`},
}

// TestStreamRejectsInvalidJSON: a watch event or list item that is not
// JSON, however its brackets balance, is an *InputError at the event's or
// item's byte, and nothing of it reaches the caller (conformance 4: the
// watcher makes it the one error, then the end; the reflector relists).
// Invalid UTF-8 in a string is accepted, as encoding/json does.
func TestStreamRejectsInvalidJSON(t *testing.T) {
	for _, tc := range invalidShapes {
		obj := `{"metadata":{"name":"bad"},"spec":` + tc.spec + `}`
		require.False(t, json.Valid([]byte(obj)), tc.name)
		t.Run("watch/"+tc.name, func(t *testing.T) {
			frame := `{"type":"MODIFIED","object":` + obj + `}`
			body := podFrame + "\n" + frame + "\n" + podFrame + "\n"
			w := newTestWatcher(strings.NewReader(body), &Decoder{})
			ev, err := w.Next()
			require.NoError(t, err)
			require.Equal(t, "a", ev.Object.Name())
			ev, err = w.Next()
			require.Error(t, err, "%s accepted: %+v", frame, ev)
			var de *InputError
			require.ErrorAs(t, err, &de)
			require.ErrorIs(t, err, errInvalidJSON)
			require.Equal(t, int64(len(podFrame)+1), de.Offset, "the event's offset")
			require.Contains(t, err.Error(), "invalid input at byte")
		})
		t.Run("list/"+tc.name, func(t *testing.T) {
			body := `{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"b"}},` + obj + `,{"metadata":{"name":"c"}}]}`
			for _, drop := range []bool{false, true} {
				p, err := (&Decoder{DropManagedFields: drop}).DecodeList(strings.NewReader(body), 0)
				require.Nil(t, p, "no page, so no item of it is cached")
				var de *InputError
				require.ErrorAs(t, err, &de)
				require.ErrorIs(t, err, errInvalidJSON)
				require.Contains(t, err.Error(), "items: item 1: ")
				require.Contains(t, err.Error(), " at byte ")
			}
		})
	}
}

// TestStreamUnterminatedString: a string the event never closes runs into
// the newline that ends the frame, a control character, and the event is
// refused at once rather than swallowing the events after it.
func TestStreamUnterminatedString(t *testing.T) {
	body := `{"type":"ADDED","object":{"metadata":{"name":"a}}}` + "\n" + podFrame + "\n"
	w := newTestWatcher(strings.NewReader(body), &Decoder{})
	_, err := w.Next()
	var de *InputError
	require.ErrorAs(t, err, &de)
	require.ErrorContains(t, err, "value at byte 0: invalid JSON: control character in a string at byte 50")

	list := `{"items":[{"metadata":{"name":"a}},{"metadata":{"name":"b"}}]}`
	_, err = (&Decoder{}).DecodeList(strings.NewReader(list), 0)
	require.ErrorAs(t, err, &de)
	require.ErrorIs(t, err, errInvalidJSON)
}

// TestStreamAcceptsInvalidUTF8: bytes that are not UTF-8 inside a string
// pass, as encoding/json.Valid lets them (Decode turns them into U+FFFD).
func TestStreamAcceptsInvalidUTF8(t *testing.T) {
	obj := "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"x\":\"\xff\xfe\xc3\"}}"
	require.True(t, json.Valid([]byte(obj)))
	w := newTestWatcher(strings.NewReader(`{"type":"ADDED","object":`+obj+"}\n"), &Decoder{})
	ev, err := w.Next()
	require.NoError(t, err)
	require.Equal(t, obj, ev.Object.String())
	p, err := (&Decoder{}).DecodeList(strings.NewReader(`{"items":[`+obj+`]}`), 0)
	require.NoError(t, err)
	require.Equal(t, obj, p.Items[0].String())
}

// TestProjectedStreamRejectsInvalidJSON: a projection that would cut the
// broken member away still refuses the event: the whole value is checked.
func TestProjectedStreamRejectsInvalidJSON(t *testing.T) {
	p, err := NewProjection("metadata.labels")
	require.NoError(t, err)
	frame := `{"type":"ADDED","object":{"metadata":{"name":"a"},"spec":{"a":tru}}}` + "\n"
	w := newTestWatcher(strings.NewReader(frame), &Decoder{Projection: p})
	_, err = w.Next()
	require.ErrorIs(t, err, errInvalidJSON)
}

// frameVerdict feeds data to a frameScanner in pieces of the given sizes
// (cycled) and reports whether it is one valid object or array, with only
// whitespace after it.
func frameVerdict(data []byte, sizes []int) bool {
	var s frameScanner
	s.spans = &spanNotes{level: 2}
	s.reset()
	off, held := 0, 0 // held: bytes handed back, fed again
	for k := 0; ; k++ {
		end := min(off+held+max(sizes[k%len(sizes)], 1), len(data))
		n, done := s.feed(data[off:end])
		off += n
		held = end - off
		if s.err != nil {
			return false
		}
		if done {
			return len(bytes.TrimLeft(data[off:], " \t\r\n")) == 0
		}
		if end == len(data) {
			return false
		}
	}
}

// FuzzFrameValid: the framer's verdict is encoding/json.Valid's, on any
// input cut anywhere, alone, as a watch event's object and as a list item.
func FuzzFrameValid(f *testing.F) {
	addFixtureSeeds(f)
	for _, in := range validCases {
		f.Add([]byte(in), uint16(3))
	}
	for _, tc := range invalidShapes {
		f.Add([]byte(tc.spec), uint16(5))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		want := json.Valid(data)
		if trimmed := bytes.TrimLeft(data, " \t\r\n"); len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
			for _, sizes := range [][]int{{len(trimmed)}, {int(cut)%(len(trimmed)+1) + 1, int(cut>>8) + 1}, {1}} {
				if got := frameVerdict(trimmed, sizes); got != want {
					t.Fatalf("frameScanner %v in pieces of %v, json.Valid %v on %q", got, sizes, want, data)
				}
			}
		}
		frame := append(append([]byte(`{"type":"ADDED","object":`), data...), "}\n"...)
		out, err := frames(t, splitAt(frame, int(cut)%(len(frame)+1)))
		framed := len(out) == 1 && err == io.EOF
		if framed != json.Valid(frame) && !errors.Is(err, ErrFrameTooLarge) {
			t.Fatalf("framer on %q: %d frames, %v; json.Valid %v", frame, len(out), err, !framed)
		}
		list := append(append([]byte(`{"items":[{},`), data...), "]}"...)
		if !json.Valid(list) {
			if _, err := listItems(splitAt(list, int(cut)%(len(list)+1)), false); err == nil {
				t.Fatalf("list %q accepted", list)
			}
		}
	})
}

// TestFrameLongStrings: a string long enough that blocks of it are crossed
// without a look at each (plainRun) still has every byte checked: a control
// character, a bad escape or a good one at any offset, cut anywhere.
func TestFrameLongStrings(t *testing.T) {
	for _, insert := range []string{"\x01", "\x1f", `\x`, `\u12x4`, `\n`, `\u00e9`, `\\`, `\"`, "\xff", `é`} {
		for k := 0; k < 300; k += 7 {
			s := strings.Repeat("x", k) + insert + strings.Repeat("y", 300-k)
			for _, doc := range []string{`{"a":"` + s + `"}`, `["` + s + `",1]`} {
				want := json.Valid([]byte(doc))
				for _, size := range []int{len(doc), 1, 63, 64, 65, 100} {
					require.Equal(t, want, frameVerdict([]byte(doc), []int{size}), "%q at %d in pieces of %d", insert, k, size)
				}
			}
		}
	}
}

// TestPlainRun: plainRun (SSE2 on amd64) and plainRunWords stop at the
// first quote, backslash or control byte, or report whole chunks without.
func TestPlainRun(t *testing.T) {
	for n := range 80 {
		for _, c := range []byte{'"', '\\', 0, '\n', 0x1f} {
			for at := 0; at <= n; at++ {
				p := bytes.Repeat([]byte("a\xff "), n)[:n]
				if at < n {
					p[at] = c
				}
				for name, f := range map[string]func([]byte) int{"plainRun": plainRun, "plainRunWords": plainRunWords} {
					got := f(p)
					if at < n {
						if got > at || (got < at && at-got >= 16) {
							t.Fatalf("%s(%q) = %d, special byte at %d", name, p, got, at)
						}
						continue
					}
					if got > n || n-got >= 16 {
						t.Fatalf("%s(%q) = %d", name, p, got)
					}
				}
			}
		}
	}
}

// TestEmptyContainers: an empty object or array (one token of the
// scanner's) and what follows it, wherever the 64-byte blocks and the
// pieces cut them, get encoding/json.Valid's verdict, and a wrong
// separator after one is reported where it is.
func TestEmptyContainers(t *testing.T) {
	shapes := []string{
		`{"a":{},"b":[],"c":{}}`, `[{},[],{},[]]`, `[{}:1]`, `{"a":{}:1}`, `{"a":[]:}`,
		`[{},]`, `[{},,1]`, `{"a":{},}`, `[{]]`, `[[},1]`, `{"a":{}}`, `[[]]`, `[{} , 1]`,
		`{"a":{}` + "\n" + `,"b":1}`, `{"a":{},"b":{},"c":{}:}`,
	}
	for _, shape := range shapes {
		for pad := range 130 {
			data := []byte(`{"p":"` + strings.Repeat("x", pad) + `","v":` + shape + `}`)
			want := json.Valid(data)
			for _, sizes := range [][]int{{len(data)}, {pad + 8}, {pad + 9, 1}, {1}} {
				require.Equal(t, want, frameVerdict(data, sizes), "%s in pieces of %v", data, sizes)
			}
		}
	}
	_, err := frames(t, [][]byte{[]byte(`{"a":{}:1}`)})
	require.ErrorContains(t, err, `expected ',' or '}', found ':' at byte 7`)
}
