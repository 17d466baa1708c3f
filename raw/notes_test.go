package raw

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/listwatch/listwatch/internal/fixtures"
)

// noteCases are objects whose tops the notes must read exactly as
// objectIter does: escaped keys (which the notes leave to it), metadata of
// every shape, managedFields at every place, repeats, more members than
// the notes hold.
var noteCases = []string{
	`{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"5","uid":"u1"}}}`,
	`{"type":"ADDED","object":{"metadata":{"managedFields":[{"a":1}],"name":"a"}}}`,
	`{"type":"ADDED","object":{"metadata":{"name":"a","managedFields":[{"a":1}]}}}`,
	`{"type":"ADDED","object":{"metadata":{"name":"a","managedFields":[],"uid":"u"}}}`,
	`{"type":"ADDED","object":{"metadata":{"managedFields":null}}}`,
	`{"type":"ADDED","object":{"metadata":{"managedFields":{},"managedFields":[1]}}}`,
	`{ "type" : "MODIFIED" , "object" : { "metadata" : { "name" : "a" , "uid" : 7 , "x" : [ ] } , "kind" : "K" } }`,
	"{\"type\":\"ADDED\",\n\"object\":\t{\"metadata\":\r{\"name\":\"a\\u0062\",\"namespace\":\"n\\\"s\"}}}",
	`{"type":"ADDED","object":{"m\u0065tadata":{"name":"a"}}}`,
	`{"type":"ADDED","object":{"metadata":{"n\u0061me":"a"}}}`,
	`{"t\u0079pe":"ADDED","object":{"metadata":{"name":"a"}}}`,
	`{"type":"ADDED","obj\u0065ct":{"metadata":{"name":"a"}}}`,
	`{"type":"ADDED","x\"object":{"metadata":{"name":"a"}},"object":{"x\"metadata":{"name":"b"}}}`,
	`{"type":"ADDED","object":{"\\":1,"metadata":{"\\\\":"a","name":"b"}}}`,
	`{"type":"ADDED","object":{"metadata":null}}`,
	`{"type":"ADDED","object":{"metadata":"x"}}`,
	`{"type":"ADDED","object":{"metadata":{}}}`,
	`{"type":"ADDED","object":{"metadata":{ }}}`,
	`{"type":"ADDED","object":{}}`,
	`{"type":"ADDED","object":{ }}`,
	`{"type":"ADDED","object":[]}`,
	`{"type":"ADDED","object":null}`,
	`{"type":"ADDED"}`,
	`{"object":{"metadata":{"name":"a"}}}`,
	`{"type":1,"object":{"metadata":{"name":"a"}}}`,
	`{"type":"ADDED","object":{"metadata":{"name":"a"}},"object":{"metadata":{"name":"b"}}}`,
	`{"type":"ADDED","type":"DELETED","object":{"metadata":{"name":"a"}},"x":{"metadata":{"name":"c"}}}`,
	`{"type":"ADDED","object":{"metadata":{"name":"a"},"metadata":{"name":"b"}}}`,
	`{"type":"ADDED","object":{"metadata":null,"metadata":{"name":"b"}}}`,
	`{"type":"ADDED","object":{"metadata":{"name":"a","name":"b"},"kind":"K","kind":"L"}}`,
	`{"type":"ADDED","object":{"spec":{"metadata":{"name":"x"}},"metadata":{"name":"a","labels":{"metadata":"y"}}}}`,
	`{"type":"ADDED","object":{"metadata":{"name":1.5e3,"namespace":true,"uid":false,"resourceVersion":null}}}`,
	`{"type":"ADDED","object":{"metadata":{"name":"` + strings.Repeat("n", 300) + `"},"x":"` + strings.Repeat("y", 70000) + `"}}`,
	`{"type":"ADDED","object":{` + manyMembers(30) + `,"metadata":{` + manyMembers(30) + `,"name":"z"}}}`,
	`{"type":"ADDED","object":{"metadata":{` + manyMembers(45) + `,"name":"z"}}}`,
}

func manyMembers(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":%d`, i, i)
	}
	return b.String()
}

// notesAgree reads the objects and arrays of data, fed in chunks, with the
// notes of a watch event (level 3) or a list item (2), and checks that
// whatever the notes say is what walking the value says: the event's type
// and object, and the Object built (or the error) with and without
// managedFields and with and without kind and apiVersion inserted.
func notesAgree(t *testing.T, chunks [][]byte, level int) {
	t.Helper()
	rd := newReader(&chunkReader{chunks: chunks}, fuzzMaxFrame, false)
	rd.sc.spans = &spanNotes{level: level}
	for {
		c, err := rd.peek()
		if err != nil || c != '{' && c != '[' {
			return
		}
		start := rd.r
		v, err := rd.container()
		if err != nil {
			return
		}
		known := rd.sc.spans.noted()
		src, at := v, 0
		if level == 3 {
			typ, obj, ok := notedEvent(v, &known)
			ev := EventReader{rd: rd}
			wtyp, wobj, werr := ev.walk(v)
			if ok && (werr != nil || !bytes.Equal(typ, wtyp) || obj != wobj) {
				t.Fatalf("event %s at %d: notes say type %q object %v, walking %q %v (%v)", v, start, typ, obj, wtyp, wobj, werr)
			}
			if !ok || obj.end == 0 || v[obj.start] != '{' {
				continue
			}
			src, at = v[obj.start:obj.end], obj.start
		}
		known.base = at
		buildsAgree(t, src, known)
	}
}

// buildsAgree checks that src builds the same with the notes as without.
func buildsAgree(t *testing.T, src []byte, known knownSpans) {
	t.Helper()
	walked := known
	walked.members = nil
	for _, opt := range []buildOptions{{}, {dropManagedFields: true}, {typeMeta: []byte(`"kind":"K","apiVersion":"v"`)}} {
		withNotes, walkOpt := opt, opt
		withNotes.known, walkOpt.known = known, walked
		o, err := buildObject(src, withNotes)
		want, werr := buildObject(src, walkOpt)
		if fmt.Sprint(err) != fmt.Sprint(werr) {
			t.Fatalf("%s: with the notes %v, walking %v", src, err, werr)
		}
		if err != nil {
			continue
		}
		for f := range nFields {
			if o.field(f) != want.field(f) {
				t.Fatalf("%s: metadata.%s with the notes %q, walking %q", src, fieldNames[f], o.field(f), want.field(f))
			}
		}
		if o.String() != want.String() {
			t.Fatalf("with the notes:\n%s\nwalking:\n%s", o, want)
		}
	}
}

// noteInputs are the fixtures, each list's items also as a stream of
// values, and noteCases.
func noteInputs(t testing.TB) [][]byte {
	var in [][]byte
	for _, name := range fixtures.Names() {
		b := fixtures.Load(t, name).Body
		in = append(in, b)
		var list struct{ Items []json.RawMessage }
		if json.Unmarshal(b, &list) == nil && len(list.Items) > 0 {
			in = append(in, bytes.Join(func() (items [][]byte) {
				for _, it := range list.Items {
					items = append(items, it)
				}
				return items
			}(), []byte("\n")))
		}
	}
	for _, c := range noteCases {
		in = append(in, []byte(c))
	}
	return in
}

// TestMemberNotesAgree: the scanner's notes of a value's top and metadata
// build the same Object, and find the same event type and object, as
// walking them does, on every fixture and case, whole and cut at many
// places (a cut in a key leaves the notes incomplete, never wrong).
func TestMemberNotesAgree(t *testing.T) {
	for _, in := range noteInputs(t) {
		for _, level := range []int{2, 3} {
			notesAgree(t, [][]byte{in}, level)
			step := max(1, len(in)/200)
			for at := 1; at < len(in); at += step {
				notesAgree(t, splitAt(in, at), level)
			}
		}
	}
}

// TestMemberNotesUsed: the notes, not a walk, read an ordinary event, and
// a member cut by a read leaves them incomplete rather than wrong.
func TestMemberNotesUsed(t *testing.T) {
	rd := newReader(strings.NewReader(podFrame), 0, false)
	rd.sc.spans = &spanNotes{level: 3}
	v, err := rd.container()
	if err != nil {
		t.Fatal(err)
	}
	known := rd.sc.spans.noted()
	if len(known.members) != 2+2+1+4 {
		t.Fatalf("noted %d members, want 9: %+v", len(known.members), known.members)
	}
	if _, _, ok := notedEvent(v, &known); !ok {
		t.Fatal("the notes did not say the event's type and object")
	}
	at := strings.Index(podFrame, `"metadata"`) + 4
	rd = newReader(&chunkReader{chunks: splitAt([]byte(podFrame), at)}, 0, false)
	rd.sc.spans = &spanNotes{level: 3}
	if _, err := rd.container(); err != nil {
		t.Fatal(err)
	}
	if !rd.sc.spans.incomplete {
		t.Fatal("a read cutting the key metadata left the notes complete")
	}
}

// FuzzMemberNotes: on any input, what the notes say is what walking says.
func FuzzMemberNotes(f *testing.F) {
	for _, in := range noteInputs(f) {
		f.Add(in, uint16(len(in)/2))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		at := int(cut) % (len(data) + 1)
		for _, level := range []int{2, 3} {
			notesAgree(t, [][]byte{data}, level)
			notesAgree(t, splitAt(data, at), level)
		}
	})
}
